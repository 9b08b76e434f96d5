"""SWE-bench Verified and Lite, graded as the official harness grades them, without Docker."""
