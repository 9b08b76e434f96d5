"""The leaderboard on the web: the board's rows from the store (board.py), filters and their URL
form (filters.py), the static build (static.py) and the Gradio app (app.py). The app and the
static build both read the store through board.py, so the two never show different numbers."""
