"""Conversations: the turns a prompt may give instead of one text (OpenAI's chat format).

A conversation is what a production request looks like: earlier user and assistant turns, an
assistant turn that called tools and the ``tool`` turns that answered those calls. The model
answers the conversation, so its last turn is a ``user`` or a ``tool`` turn. The shapes are the
ones OpenAI's chat API and LiteLLM take, so an agent's trace can be pasted; a tool call may also
be written flat (``{id, name, arguments}``).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

Role = Literal["system", "user", "assistant", "tool"]


class ChatToolCall(BaseModel):
    """A tool call made by an earlier assistant turn of a conversation."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str = Field(min_length=1)
    name: str = Field(min_length=1)
    arguments: dict[str, Any] | str = Field(default_factory=dict)
    """A mapping, or the JSON text the model produced (sent as it is)."""

    @model_validator(mode="before")
    @classmethod
    def _from_openai(cls, data: Any) -> Any:
        """``{id, type: function, function: {name, arguments}}`` → ``{id, name, arguments}``."""
        if isinstance(data, dict) and isinstance(data.get("function"), dict):
            if data.get("type", "function") != "function":
                raise ValueError(f"a tool call's type must be 'function', got {data['type']!r}")
            flat = {k: v for k, v in data.items() if k not in ("type", "function")}
            return {**flat, **data["function"]}
        return data

    def wire(self) -> dict[str, Any]:
        arguments = self.arguments
        if not isinstance(arguments, str):
            arguments = json.dumps(arguments, ensure_ascii=False)
        return {
            "id": self.id,
            "type": "function",
            "function": {"name": self.name, "arguments": arguments},
        }


class ChatMessage(BaseModel):
    """One turn of a conversation."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    role: Role
    content: str | None = None
    tool_calls: list[ChatToolCall] | None = None
    """Only on ``assistant`` turns: the calls that the following ``tool`` turns answer."""
    tool_call_id: str | None = None
    """Only on ``tool`` turns: the id of the call this turn answers."""
    name: str | None = None

    @model_validator(mode="after")
    def _shape(self) -> ChatMessage:
        if self.tool_calls is not None and self.role != "assistant":
            raise ValueError(f"only an assistant turn has 'tool_calls', not a {self.role} turn")
        if self.role == "tool" and not self.tool_call_id:
            raise ValueError("a tool turn needs 'tool_call_id': the id of the call it answers")
        if self.role != "tool" and self.tool_call_id is not None:
            raise ValueError(f"only a tool turn has 'tool_call_id', not a {self.role} turn")
        if self.content is None and not (self.role == "assistant" and self.tool_calls):
            raise ValueError(f"a {self.role} turn needs 'content'")
        return self

    def wire(self) -> dict[str, Any]:
        """The turn as OpenAI's chat API (and LiteLLM) takes it."""
        message: dict[str, Any] = {"role": self.role, "content": self.content}
        if self.tool_calls:
            message["tool_calls"] = [call.wire() for call in self.tool_calls]
        if self.tool_call_id is not None:
            message["tool_call_id"] = self.tool_call_id
        if self.name is not None:
            message["name"] = self.name
        return message


def conversation_problem(messages: Sequence[ChatMessage], first: int = 1) -> tuple[int, str] | None:
    """What makes ``messages`` a conversation no model can answer: the index of the turn at
    fault and what to fix (turns numbered from ``first`` in the text); else ``None``.

    Every tool turn answers a call of the assistant turn before it, every call is answered
    before the next user or assistant turn (the chat APIs refuse anything else), and the last
    turn is the user's or a tool's.
    """
    if not messages:
        return 0, "a conversation needs at least one turn"
    if not any(m.role == "user" for m in messages):
        return 0, "a conversation needs a user turn"
    open_calls: dict[str, str] = {}
    for i, message in enumerate(messages):
        n = i + first
        if message.role == "tool":
            if message.tool_call_id not in open_calls:
                made = ", ".join(repr(c) for c in open_calls) or "none is open"
                return i, (
                    f"turn {n} (tool) answers no call: tool_call_id {message.tool_call_id!r} "
                    f"is not a call of the assistant turn before it (open calls: {made})"
                )
            del open_calls[message.tool_call_id]
            continue
        if open_calls:
            return i, (
                f"turn {n} ({message.role}) comes before the call(s) "
                f"{', '.join(repr(c) for c in open_calls)} were answered: add a tool turn "
                "with that tool_call_id after the assistant turn that made the call"
            )
        open_calls = {c.id: c.name for c in message.tool_calls or []}
    last = messages[-1]
    if last.role not in ("user", "tool"):
        return len(messages) - 1, (
            f"the last turn is a {last.role} turn: the model answers the conversation, so it "
            "ends with a user turn or a tool turn (move the answer you expect into a probe)"
        )
    return None


def last_user_text(messages: Sequence[ChatMessage]) -> str:
    """The content of the conversation's last user turn (its text in reports and its slug)."""
    return next(m.content or "" for m in reversed(messages) if m.role == "user")


def split_system(
    messages: Sequence[ChatMessage],
) -> tuple[str | None, list[ChatMessage]]:
    """A leading system turn taken out (it is the prompt's system prompt), and the rest."""
    if messages and messages[0].role == "system":
        return messages[0].content, list(messages[1:])
    return None, list(messages)


def conversation_tail(messages: Sequence[ChatMessage], turns: int = 3, limit: int = 500) -> str:
    """The last ``turns`` turns as plain text (``role: content``, calls as ``→ name(args)``),
    each cut to ``limit`` characters: what a report shows before the answer it judged."""
    lines = []
    for message in messages[-turns:]:
        label = f"tool {message.tool_call_id}" if message.role == "tool" else message.role
        parts = [message.content] if message.content else []
        parts += [
            f"→ {c.name}({c.wire()['function']['arguments']})" for c in message.tool_calls or []
        ]
        text = " ".join(parts)
        lines.append(f"{label}: {text if len(text) <= limit else text[: limit - 1] + '…'}")
    return "\n".join(lines)
