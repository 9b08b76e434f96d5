"""SWE-bench Verified and Lite: repository-level tasks graded as the official harness does."""
