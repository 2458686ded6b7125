"""Compatibility shim: upstream's approval transport contract (`hermes_cli.approval_transport`).

A transport's present(request) gets an ApprovalRequest built by the host and
answers with request.respond(choice). The host checks the decision: its id and
digest must be the request's own, its choice one the request offered.
"""
from dataclasses import dataclass
from typing import Awaitable, Callable, Literal, Optional, Tuple, Union

ApprovalChoice = Literal["once", "session", "always", "deny"]


@dataclass(frozen=True)
class ApprovalDecision:
    request_id: str
    request_digest: str
    choice: str


@dataclass(frozen=True)
class ApprovalRequest:
    schema_version: int
    request_id: str
    digest: str
    command: str
    description: str
    pattern_key: str
    pattern_keys: Tuple[str, ...]
    surface: str
    timeout_seconds: float
    allowed_choices: Tuple[str, ...]

    def respond(self, choice):
        # Not checked here (upstream): the host refuses a choice it did not offer.
        return ApprovalDecision(request_id=self.request_id, request_digest=self.digest, choice=choice)


@dataclass(frozen=True)
class ApprovalTransportResult:
    choice: str
    failure: Optional[str] = None


ApprovalPresentFn = Callable[[ApprovalRequest], Union[ApprovalDecision, Awaitable[ApprovalDecision]]]
