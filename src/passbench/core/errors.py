"""One exception tree under one root.

A failing program under test is *data* (an ExecResult), never an exception. Exceptions are for
things a user must act on: bad input files, a broken sandbox, a missing environment, a provider
that refuses.

    PassbenchError
    ├── InputError            bad user input (file, line, field); CLI exit code 2
    │   ├── SampleFileError   a samples file that cannot be read as samples
    │   ├── UnknownNameError  unknown benchmark / split / subset / provider / task id
    │   └── SubmissionRejected  a leaderboard bundle refused before queueing, with why
    ├── PermissionDenied      a token that may not do this (another submitter's entry)
    ├── DatasetError          benchmark data missing, corrupt, or not downloadable
    ├── EnvironmentError_     the evaluation environment is missing or incomplete
    ├── SandboxError          the sandbox itself failed (not the program under test)
    │   ├── BackendUnavailable  a remote backend could not be reached or dropped the
    │   │                       connection (infrastructure: retried; verdicts never are)
    │   └── WireError         a message between a remote backend and its client is malformed
    ├── ProviderError         a model provider failed
    │   └── PermanentProviderError  401, unknown model...: stop the run at once
    └── ResultsError          stored results cannot be read
        └── ResultsFileError  a result file the user named is malformed (also an InputError)
"""

from __future__ import annotations

from pathlib import Path


class PassbenchError(Exception):
    """Root of every error passbench raises on purpose."""

    exit_code = 1


class InputError(PassbenchError):
    """Bad input from the user. The message names the file, line and field where it can."""

    exit_code = 2

    def __init__(
        self,
        message: str,
        *,
        path: str | Path | None = None,
        line: int | None = None,
        field: str | None = None,
    ) -> None:
        self.path = str(path) if path is not None else None
        self.line = line
        self.field = field
        self.bare_message = message
        where = ""
        if self.path is not None:
            where = self.path
            if line is not None:
                where += f":{line}"
            where += ": "
        if field is not None:
            where += f"field '{field}': "
        super().__init__(where + message)


class SampleFileError(InputError):
    """A samples file that cannot be read as samples."""


class UnknownNameError(InputError):
    """An unknown benchmark, split, subset, provider or task id."""


class SubmissionRejected(InputError):
    """A leaderboard submission refused before it was queued; nothing was stored. `code` says
    which check refused it (format, size, dataset, coverage, duplicate, rate_limit, token)."""

    def __init__(
        self,
        message: str,
        *,
        code: str,
        path: str | Path | None = None,
        line: int | None = None,
        field: str | None = None,
    ) -> None:
        self.code = code
        super().__init__(message, path=path, line=line, field=field)


class PermissionDenied(PassbenchError):
    """A token that may not do what was asked (change another submitter's entry, admin only)."""

    exit_code = 3


class DatasetError(PassbenchError):
    """Benchmark data is missing, corrupt or cannot be downloaded."""


class EnvironmentError_(PassbenchError):  # trailing _: `EnvironmentError` is a builtin alias
    """The evaluation environment is missing or incomplete."""


class SandboxError(PassbenchError):
    """The sandbox failed (as opposed to the program under test failing)."""


class HostUnfit(SandboxError):
    """This machine cannot run the programs as asked (a missing tool, privilege or kernel
    feature): asking it again cannot help, so a backend that runs programs elsewhere does not
    retry it."""


class BackendUnavailable(SandboxError):
    """A remote backend could not be reached, or dropped the connection mid-run."""


class WireError(SandboxError):
    """A message between a remote backend and its client does not follow the protocol."""


class ProviderError(PassbenchError):
    """A model provider failed."""


class PermanentProviderError(ProviderError):
    """A provider error that retrying cannot fix (bad key, unknown model)."""


class ResultsError(PassbenchError):
    """Stored results cannot be read."""


class ResultsFileError(InputError, ResultsError):
    """A result file the user named cannot be read as results (bad input: exit code 2)."""
