"""Suite YAML texts read by several test layers: the documented example and a YAML bomb."""

SPEC_YAML = """\
name: my-suite
description: Tests production agent behaviour.
probes:
  - type: json_validity
  - type: step_by_step
    expect_steps: false
  - type: keyword_presence
    required_keywords: ["Paris"]
prompts:
  - text: "What is the capital of France?"
    expected_keywords: ["Paris"]
    description: "Basic geography canary"
"""


def yaml_bomb(levels: int) -> str:
    """A billion-laughs suite: ``levels`` aliases deep, each ten of the one below."""
    lines = ["a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]" for i in range(1, levels + 1)]
    lines += [
        "name: bomb",
        f"prompts: [{{text: hi, metadata: {{x: *a{levels}}}}}]",
        "probes: [{type: json_validity}]",
    ]
    return "\n".join(lines) + "\n"


#: The answer :func:`ping_suite` is replayed from (``recording.jsonl`` in the workspace).
PING_RECORDING = {"prompt_id": "ping", "sample": 0, "content": "pong", "finish_reason": "stop"}


def ping_suite(name: str) -> str:
    """A one-prompt suite answered from ``recording.jsonl`` (:data:`PING_RECORDING`): no model
    server, no LiteLLM."""
    return (
        f"name: {name}\n"
        "models:\n"
        "  - replay:recording.jsonl\n"
        "prompts:\n"
        "  - id: ping\n"
        "    text: Say pong\n"
        "    probes:\n"
        "      - type: keyword_presence\n"
        "        required_keywords: [pong]\n"
    )
