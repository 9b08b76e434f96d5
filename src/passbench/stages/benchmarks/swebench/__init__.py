"""SWE-bench Verified and Lite: repository-level tasks graded as the official harness grades them
(SWE-bench/SWE-bench, `swebench/harness/`), without Docker. Nothing outside this package names
SWE-bench."""
