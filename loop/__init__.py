"""voiceloop's turn loop: budget, assemble, decide, vet, act, observe. Knows nothing about audio.

    from loop import Agent, Tool, Policy, Model          # an agent, its tools, its rules, any model backend
    from loop import Conversation, TestModel             # testing an agent in text, with no model weights
"""

from loop.act import Observation
from loop.agent import Agent, RunResult
from loop.approvals import ApprovalAnswer
from loop.config import Budget, Ceiling, LoopConfig
from loop.events import CANCELLED_BY_CALLER, EventKind, ObservationStatus
from loop.models.scripted import ScriptedModel, ScriptedTurn
from loop.outcomes import Escalated, RunOutcome
from loop.policy.rules import Decision, GuardrailHit, Policy, Rule, Severity, Verdict, VetContext
from loop.store.journal import Event, Journal
from loop.store.ledger import SharedLedger, TenantBudget
from loop.testing import Conversation, TestModel
from loop.tools import Tool, ToolDefinitionError, ToolOutput
from loop.types import Message, Model, ModelRequest, ModelResponse, Pricing, TextDelta, ToolCall, ToolCallDelta, Usage

__all__ = [
    "CANCELLED_BY_CALLER",
    "Agent",
    "ApprovalAnswer",
    "Budget",
    "Ceiling",
    "Conversation",
    "Decision",
    "Escalated",
    "Event",
    "EventKind",
    "GuardrailHit",
    "Journal",
    "LoopConfig",
    "Message",
    "Model",
    "ModelRequest",
    "ModelResponse",
    "Observation",
    "ObservationStatus",
    "Policy",
    "Pricing",
    "Rule",
    "RunOutcome",
    "RunResult",
    "ScriptedModel",
    "ScriptedTurn",
    "Severity",
    "SharedLedger",
    "TenantBudget",
    "TestModel",
    "TextDelta",
    "Tool",
    "ToolCall",
    "ToolCallDelta",
    "ToolDefinitionError",
    "ToolOutput",
    "Usage",
    "Verdict",
    "VetContext",
]
