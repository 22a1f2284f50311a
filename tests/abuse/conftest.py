"""One `voiceloop serve` shared by the abuse modules that need no special limits (rights, small ones, secrets):
the scripted refund agent, its tokens read from files while the environment holds other values (the files must
win), no TWILIO_AUTH_TOKEN and no opt-in (the webhook must refuse)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.abuse.serving import OPERATOR, TOKEN, Server, serving

REFUND = [{"tool_calls": [{"name": "lookup_order", "arguments": {"order_id": "4567"}}]},
          {"tool_calls": [{"name": "issue_refund", "arguments": {"order_id": "4567", "amount": 20}}]},
          {"text": "Done. I refunded twenty dollars for order 4567."}]
ENV_TOKENS = {"VOICELOOP_TOKEN": "env-caller-token", "VOICELOOP_OPERATOR_TOKEN": "env-operator-token"}


@pytest.fixture(scope="package")
def shared(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    tmp = tmp_path_factory.mktemp("shared")
    (tmp / "caller").write_text(TOKEN + "\n")
    (tmp / "operator").write_text(OPERATOR + "\n")
    with serving(tmp, REFUND, "--token-file", str(tmp / "caller"), "--operator-token-file", str(tmp / "operator"),
                 env=ENV_TOKENS) as served:
        yield served
