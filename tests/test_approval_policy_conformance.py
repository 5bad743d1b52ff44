"""The approval policy conformance rules, run as a policy author would run them: against the
three policies of the bundled ``approvals`` plugin, made as the host makes them."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from hermes_core.plugin import Decision, Session, ToolCall
from hermes_core.testing import approval_policy_conformance, make_approval_policy


@pytest.mark.parametrize("name", ["annotations", "manual", "off"])
def test_the_bundled_policies_follow_the_protocol(name: str) -> None:
    for param in approval_policy_conformance(lambda: make_approval_policy(name)):
        param.values[0]()


@pytest.mark.parametrize("check", approval_policy_conformance(make_approval_policy))
def test_each_rule_is_one_test_named_after_it(check: Callable[[], None]) -> None:
    check()


class _Forgetful:
    """Asks without saying why."""

    def decide(self, call: ToolCall, session: Session) -> Decision:
        return Decision.ask()


class _Meddling:
    """Edits the arguments it is asked about."""

    def decide(self, call: ToolCall, session: Session) -> Decision:
        call.arguments["checked"] = True
        return Decision.allow()


@pytest.mark.parametrize(
    ("policy", "rule", "said"),
    [
        pytest.param(_Forgetful, "an-ask-or-a-deny-says-why", "ask without a message", id="ask"),
        pytest.param(
            _Meddling,
            "deciding-changes-neither-the-call-nor-the-session",
            "the arguments were changed",
            id="meddling",
        ),
    ],
)
def test_a_policy_breaking_a_rule_fails_it_saying_how(
    policy: Callable[[], object], rule: str, said: str
) -> None:
    checks = {param.id: param.values[0] for param in approval_policy_conformance(policy)}  # type: ignore[arg-type]

    with pytest.raises(AssertionError, match=said):
        checks[rule]()
