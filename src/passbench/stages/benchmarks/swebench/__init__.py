"""SWE-bench Verified and Lite: repository-level tasks graded as the official harness grades them
(SWE-bench/SWE-bench, `swebench/harness/`), without Docker. The dataset rows and the pieces of their
official eval scripts (`instances`), the predictions files the official tools write
(`predictions`), where the repositories come from and how a working copy of a base commit is made
(`repos`), and the official patch-apply fallback chain (`patching`) live here; nothing outside this
package names SWE-bench."""
