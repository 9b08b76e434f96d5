"""The chat Aider's benchmark sends for one exercise, message by message.

Wording from Aider-AI/aider (benchmark/prompts.py, aider/coders/base_prompts.py,
wholefile_prompts.py, editblock_prompts.py, base_coder.py `format_chat_chunks`,
`fmt_system_prompt`, `get_files_content`), for a model with Aider's default settings (a system
prompt, examples as messages, the reminder appended to the user's message, not `lazy`, not
`overeager`, no reply language) and shell commands off, as the benchmark runs them:

1. system: the edit format's `main_system` + "\\n" + its `system_reminder`;
2. the format's example conversation, then "I switched to a new code base..." / "Ok.";
3. user: "I have *added these files to the chat*..." and each file to edit: its name, a fence,
   its text, the closing fence; assistant: "Ok, any changes I propose will be to those files.";
4. user: the exercise's introduction + instructions + instructions.append + Aider's addendum
   (naming the files to edit), then "\\n\\n" + the reminder again.

A follow-up request (a reflection, a later try) is laid out as Aider's coder holds its chat
(`follow_up`): base_coder.py `send_message` appends each user message and answer to
`cur_messages`; once an answer's edits are applied (`apply_updates` found edits: a SEARCH block
that matched nothing counts, a parse error does not), `move_back_cur_messages` moves them to
`done_messages` with "I updated the files." / "Ok." (`files_content_gpt_edits_no_repo`: the
benchmark's coder has no git); `format_chat_chunks` then sends system, examples, done, the chat
files as they now are, the current messages, the reminder appended to the last of them.

Deviation: Aider's system prompt describes the user's platform (OS, shell, date); passbench
leaves that block out so that a prompt does not depend on the machine or the day.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from passbench.core.records import Exchange
from passbench.stages.benchmarks.aider_polyglot.edits import APPLIERS, choose_fence

INSTRUCTIONS_ADDENDUM = """
####

Use the above instructions to modify the supplied files: {file_list}
Don't change the names of existing functions or classes, as they may be referenced from other code like unit tests, etc.
Only use standard libraries, don't suggest installing any packages.
"""  # noqa: E501

#: what Aider sends after a failed test run (the multi-turn protocol, after the test output)
TEST_FAILURES = """
####

See the testing errors above.
The tests are correct, don't try and change them.
Fix the code in {file_list} to resolve the errors.
"""

FILES_CONTENT_PREFIX = """I have *added these files to the chat* so you can go ahead and edit them.

*Trust this message as the true contents of these files!*
Any other messages in the chat may contain outdated versions of the files' contents.
"""
FILES_CONTENT_REPLY = "Ok, any changes I propose will be to those files."
#: what Aider's coder says after an answer whose edits it applied, with no git repository
#: (base_prompts.py `files_content_gpt_edits_no_repo`, base_coder.py `move_back_cur_messages`)
UPDATED_FILES = "I updated the files."
NEW_CODE_BASE = (
    "I switched to a new code base. Please don't consider the above files or try to edit them "
    "any longer."
)

_WHOLE_SYSTEM = """Act as an expert software developer.
Take requests for changes to the supplied code.
If the request is ambiguous, ask questions.
{final_reminders}
Once you understand the request you MUST:
1. Determine if any code changes are needed.
2. Explain any needed changes.
3. If changes are needed, output a copy of each file that needs changes.
"""

_WHOLE_EXAMPLES = (
    ("user", "Change the greeting to be more casual"),
    (
        "assistant",
        """Ok, I will:

1. Switch the greeting text from "Hello" to "Hey".

show_greeting.py
{fence[0]}
import sys

def greeting(name):
    print(f"Hey {{name}}")

if __name__ == '__main__':
    greeting(sys.argv[1])
{fence[1]}
""",
    ),
)

_WHOLE_REMINDER = """To suggest changes to a file you MUST return the entire content of the updated file.
You MUST use this *file listing* format:

path/to/filename.js
{fence[0]}
// entire file content ...
// ... goes in between
{fence[1]}

Every *file listing* MUST use this format:
- First line: the filename with any originally provided path; no extra markup, punctuation, comments, etc. **JUST** the filename with path.
- Second line: opening {fence[0]}
- ... entire content of the file ...
- Final line: closing {fence[1]}

To suggest changes to a file you MUST return a *file listing* that contains the entire content of the file.
*NEVER* skip, omit or elide content from a *file listing* using "..." or by adding comments like "... rest of code..."!
Create a new file you MUST return a *file listing* which includes an appropriate filename, including any appropriate path.

{final_reminders}
"""  # noqa: E501

_DIFF_SYSTEM = """Act as an expert software developer.
Always use best practices when coding.
Respect and use existing conventions, libraries, etc that are already present in the code base.
{final_reminders}
Take requests for changes to the supplied code.
If the request is ambiguous, ask questions.

Once you understand the request you MUST:

1. Decide if you need to propose *SEARCH/REPLACE* edits to any files that haven't been added to the chat. You can create new files without asking!

But if you need to propose edits to existing files not already added to the chat, you *MUST* tell the user their full path names and ask them to *add the files to the chat*.
End your reply and wait for their approval.
You can keep asking if you then decide you need to edit more files.

2. Think step-by-step and explain the needed changes in a few short sentences.

3. Describe each change with a *SEARCH/REPLACE block* per the examples below.

All changes to files must use this *SEARCH/REPLACE block* format.
ONLY EVER RETURN CODE IN A *SEARCH/REPLACE BLOCK*!
{shell_cmd_prompt}
"""  # noqa: E501

_DIFF_EXAMPLES = (
    ("user", "Change get_factorial() to use math.factorial"),
    (
        "assistant",
        """To make this change we need to modify `mathweb/flask/app.py` to:

1. Import the math package.
2. Remove the existing factorial() function.
3. Update get_factorial() to call math.factorial instead.

Here are the *SEARCH/REPLACE* blocks:

mathweb/flask/app.py
{fence[0]}python
<<<<<<< SEARCH
from flask import Flask
=======
import math
from flask import Flask
>>>>>>> REPLACE
{fence[1]}

mathweb/flask/app.py
{fence[0]}python
<<<<<<< SEARCH
def factorial(n):
    "compute factorial"

    if n == 0:
        return 1
    else:
        return n * factorial(n-1)

=======
>>>>>>> REPLACE
{fence[1]}

mathweb/flask/app.py
{fence[0]}python
<<<<<<< SEARCH
    return str(factorial(n))
=======
    return str(math.factorial(n))
>>>>>>> REPLACE
{fence[1]}
""",
    ),
    ("user", "Refactor hello() into its own file."),
    (
        "assistant",
        """To make this change we need to modify `main.py` and make a new file `hello.py`:

1. Make a new hello.py file with hello() in it.
2. Remove hello() from main.py and replace it with an import.

Here are the *SEARCH/REPLACE* blocks:

hello.py
{fence[0]}python
<<<<<<< SEARCH
=======
def hello():
    "print a greeting"

    print("hello")
>>>>>>> REPLACE
{fence[1]}

main.py
{fence[0]}python
<<<<<<< SEARCH
def hello():
    "print a greeting"

    print("hello")
=======
from hello import hello
>>>>>>> REPLACE
{fence[1]}
""",
    ),
)

_DIFF_REMINDER = """# *SEARCH/REPLACE block* Rules:

Every *SEARCH/REPLACE block* must use this format:
1. The *FULL* file path alone on a line, verbatim. No bold asterisks, no quotes around it, no escaping of characters, etc.
2. The opening fence and code language, eg: {fence[0]}python
3. The start of search block: <<<<<<< SEARCH
4. A contiguous chunk of lines to search for in the existing source code
5. The dividing line: =======
6. The lines to replace into the source code
7. The end of the replace block: >>>>>>> REPLACE
8. The closing fence: {fence[1]}

Use the *FULL* file path, as shown to you by the user.
{quad_backtick_reminder}
Every *SEARCH* section must *EXACTLY MATCH* the existing file content, character for character, including all comments, docstrings, etc.
If the file contains code or other data wrapped/escaped in json/xml/quotes or other containers, you need to propose edits to the literal contents of the file, including the container markup.

*SEARCH/REPLACE* blocks will *only* replace the first match occurrence.
Including multiple unique *SEARCH/REPLACE* blocks if needed.
Include enough lines in each SEARCH section to uniquely match each set of lines that need to change.

Keep *SEARCH/REPLACE* blocks concise.
Break large *SEARCH/REPLACE* blocks into a series of smaller blocks that each change a small portion of the file.
Include just the changing lines, and a few surrounding lines if needed for uniqueness.
Do not include long runs of unchanging lines in *SEARCH/REPLACE* blocks.

Only create *SEARCH/REPLACE* blocks for files that the user has added to the chat!

To move code within a file, use 2 *SEARCH/REPLACE* blocks: 1 to delete it from its current location, 1 to insert it in the new location.

Pay attention to which filenames the user wants you to edit, especially if they are asking you to create a new file.

If you want to put code in a new file, use a *SEARCH/REPLACE block* with:
- A new file path, including dir name if needed
- An empty `SEARCH` section
- The new file's contents in the `REPLACE` section

{rename_with_shell}{go_ahead_tip}{final_reminders}ONLY EVER RETURN CODE IN A *SEARCH/REPLACE BLOCK*!
{shell_cmd_reminder}
"""  # noqa: E501

_GO_AHEAD_TIP = """If the user just says something like "ok" or "go ahead" or "do that" they probably want you to make SEARCH/REPLACE blocks for the code changes you just proposed.
The user will say when they've applied your edits. If they haven't explicitly confirmed the edits have been applied, they probably want proper SEARCH/REPLACE blocks.

"""  # noqa: E501

#: edit format -> (main system prompt, example conversation, system reminder)
FORMATS = {
    "whole": (_WHOLE_SYSTEM, _WHOLE_EXAMPLES, _WHOLE_REMINDER),
    "diff": (_DIFF_SYSTEM, _DIFF_EXAMPLES, _DIFF_REMINDER),
}


def _fill(template: str, fence: tuple[str, str]) -> str:
    """`fmt_system_prompt` with shell commands off, no final reminders and no platform block
    (Aider's `no_shell_cmd_prompt` is only that block)."""
    quad = (
        "\nIMPORTANT: Use *quadruple* backticks ```` as fences, not triple backticks!\n"
        if fence[0] == "`" * 4
        else ""
    )
    return template.format(
        fence=fence,
        quad_backtick_reminder=quad,
        final_reminders="",
        shell_cmd_prompt="",
        shell_cmd_reminder="",
        rename_with_shell="",
        go_ahead_tip=_GO_AHEAD_TIP,
    )


def instructions(introduction: str | None, text: str, file_list: str) -> str:
    """The user's request: introduction + instructions (+ append) + Aider's addendum."""
    return (introduction or "") + text + INSTRUCTIONS_ADDENDUM.format(file_list=file_list)


def files_message(files: Mapping[str, str], fence: tuple[str, str]) -> str:
    """The chat files, as `get_files_content` lists them after the prefix."""
    parts = [FILES_CONTENT_PREFIX]
    for name, text in files.items():
        parts.append(f"\n{name}\n{fence[0]}\n{text}{fence[1]}\n")
    return "".join(parts)


Message = dict[str, str]


def _said(role: str, content: str) -> Message:
    return {"role": role, "content": content}


def chat(
    edit_format: str,
    files: Mapping[str, str],
    done: Sequence[Message],
    current: Sequence[Message],
) -> list[Message]:
    """The messages of one request (`format_chat_chunks`): system, the examples, the `done`
    messages, the chat `files` (shown name -> text), the `current` messages with the reminder
    appended to the last (a user message). The fence is chosen for the files as they are."""
    system, examples, reminder = FORMATS[edit_format]
    fence = choose_fence(files)
    last = current[-1]
    if last["role"] != "user":
        raise ValueError("a request ends with the user's message")
    return [
        _said("system", _fill(system, fence) + "\n" + _fill(reminder, fence)),
        *(_said(role, _fill(content, fence)) for role, content in examples),
        _said("user", NEW_CODE_BASE),
        _said("assistant", "Ok."),
        *done,
        _said("user", files_message(files, fence)),
        _said("assistant", FILES_CONTENT_REPLY),
        *current[:-1],
        _said("user", last["content"] + "\n\n" + _fill(reminder, fence)),
    ]


def messages(edit_format: str, files: Mapping[str, str], request: str) -> list[Message]:
    """The whole chat of the first try for `request` on the chat `files` (shown name -> text)."""
    return chat(edit_format, files, (), (_said("user", request),))


def follow_up(
    edit_format: str, files: Mapping[str, str], request: str, exchanges: Sequence[Exchange]
) -> list[Message]:
    """The chat of the request after `exchanges` (each answer, then the user message that
    followed it: a reflection, a try's test output) of the conversation that began with
    `request` on the stub `files`: Aider's coder's `done_messages` and `cur_messages` after
    each answer, the files as every answer left them."""
    done: list[Message] = []
    current = [_said("user", request)]
    for exchange in exchanges:
        if exchange.answer:  # add_assistant_reply_to_cur_messages: an empty reply adds nothing
            current.append(_said("assistant", exchange.answer))
        applied = APPLIERS[edit_format](exchange.answer, files)
        files = applied.files
        if applied.blocks:  # apply_updates returned the files of its edits: they move back
            done += [*current, _said("user", UPDATED_FILES), _said("assistant", "Ok.")]
            current = []
        current.append(_said("user", exchange.message))
    return chat(edit_format, dict(sorted(files.items())), done, current)
