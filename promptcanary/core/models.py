"""The PromptCanary data model: prompts, responses, probe results, runs, baselines, drift reports.

These pydantic models are public API (templates and custom probes see them). Everything that is
compared between two runs has a deterministic identity: a prompt's default id is derived from its
text and system prompt, a probe result is keyed by ``(prompt_id, probe_key)``.
"""

from __future__ import annotations

import hashlib
import json
import re
import uuid
from collections import defaultdict
from collections.abc import Callable
from datetime import UTC, datetime
from enum import Enum
from typing import Any

from pydantic import (
    AliasChoices,
    BaseModel,
    ConfigDict,
    Field,
    computed_field,
    field_validator,
    model_validator,
)

from promptcanary.core.messages import (
    ChatMessage,
    conversation_problem,
    last_user_text,
    split_system,
)
from promptcanary.core.stats import DEFAULT_ALPHA
from promptcanary.core.words import plural

SCHEMA_VERSION = 2
"""Version of the baseline snapshot document written by this engine."""

MAX_STORED_RESPONSE_CHARS = 100_000
"""Characters of a response's text kept in runs, snapshots and recordings (about 25k tokens).

The probes score the whole text first; only what is stored is cut, and the response then says
how long the text was (:attr:`LLMResponse.truncated_from`).
"""

TEMPERATURE_RANGE = (0.0, 2.0)
"""Sampling temperatures a :class:`ProviderConfig` accepts (what the providers accept)."""
MAX_TOKENS_CAP = 1_000_000
"""The largest ``max_tokens`` accepted anywhere (suite, model entry, flag, input): above every
model's output limit, so a typo (``99999999999999999999999``) is an error, not a request."""


def _utcnow() -> datetime:
    return datetime.now(UTC)


def _new_uuid() -> str:
    # Run and snapshot ids name an event, not content: randomness is fine here (never compared).
    return str(uuid.uuid4())


_SLUG_RE = re.compile(r"[^a-z0-9]+")


def slugify(text: str, max_len: int = 40) -> str:
    """A lowercase, URL- and file-safe slug (``openai/gpt-4o`` → ``openai-gpt-4o``)."""
    slug = _SLUG_RE.sub("-", text.lower()).strip("-")
    return slug[:max_len].rstrip("-") or "x"


def name_slug(name: str, limit: int = 60) -> str:
    """A folder- and marker-safe name for a suite or model: its slug, and when the slug had to
    be cut to ``limit``, a hash of the whole name too, so that ids alike in their first
    characters (Bedrock inference-profile ARNs, long fine-tune ids) stay apart."""
    slug = slugify(name, limit)
    if len(slugify(name, len(name) + 1)) <= limit:
        return slug  # short names keep the plain slug: existing folders and markers still match
    return f"{slug}-{hashlib.sha256(name.encode()).hexdigest()[:8]}"


def default_prompt_id(text: str, system_prompt: str | None = None) -> str:
    """Deterministic prompt id: a slug of the text plus a short hash of text and system prompt."""
    digest = hashlib.sha256(f"{system_prompt or ''}\x00{text}".encode()).hexdigest()[:8]
    return f"{slugify(text, 32)}-{digest}"


def default_conversation_id(
    messages: list[ChatMessage], text: str, system_prompt: str | None = None
) -> str:
    """A conversation's id: a slug of its last user turn plus a hash of every turn."""
    turns = json.dumps([m.wire() for m in messages], sort_keys=True, ensure_ascii=False)
    digest = hashlib.sha256(f"{system_prompt or ''}\x00{turns}".encode()).hexdigest()[:8]
    return f"{slugify(text, 32)}-{digest}"


class ProbeCategory(str, Enum):
    """High-level family of a probe."""

    FORMAT = "format"
    REASONING = "reasoning"
    SAFETY = "safety"
    TOOL_USE = "tool_use"
    FACTUAL = "factual"
    SEMANTIC = "semantic"
    """Meaning, in embedding space (``semantic_similarity``, ``semantic_drift:``)."""
    CUSTOM = "custom"


class DriftSeverity(str, Enum):
    """How bad a drift report is, from ``none`` to ``critical`` (ordered)."""

    NONE = "none"
    LOW = "low"
    MEDIUM = "medium"
    HIGH = "high"
    CRITICAL = "critical"

    @property
    def rank(self) -> int:
        return _SEVERITY_ORDER.index(self)

    def at_least(self, other: DriftSeverity) -> bool:
        return self.rank >= other.rank


_SEVERITY_ORDER = list(DriftSeverity)


class ReportFormat(str, Enum):
    """Output formats of reports (kept for code written against PromptCanary 0.2.2)."""

    TERMINAL = "terminal"
    MARKDOWN = "markdown"
    HTML = "html"
    JSON = "json"


class CanaryPrompt(BaseModel):
    """A single prompt entry in a CanarySuite, with optional metadata."""

    model_config = ConfigDict(frozen=True)

    id: str = ""
    text: str = ""
    """The prompt sent to the model; for a conversation, its last user turn (set from it)."""
    description: str = ""
    system_prompt: str | None = None
    expected_keywords: list[str] = Field(default_factory=list)
    tags: list[str] = Field(default_factory=list)
    tools: list[dict[str, Any]] | None = None
    response_format: dict[str, Any] | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)
    messages: list[ChatMessage] | None = None
    """A conversation the model answers instead of one text (see :mod:`promptcanary.core.messages`);
    a leading system turn becomes :attr:`system_prompt`."""

    @field_validator("text")
    @classmethod
    def text_must_be_nonempty(cls, v: str) -> str:
        if not v.strip():
            raise ValueError("text must not be empty: give the prompt sent to the model")
        return v

    @model_validator(mode="after")
    def _default_id(self) -> CanaryPrompt:
        if self.messages is not None:
            self._take_conversation(self.messages)
        elif not self.text:
            raise ValueError("give the prompt's `text` (or a conversation as `messages`)")
        if not self.id:
            ident = (
                default_prompt_id(self.text, self.system_prompt)
                if self.messages is None
                else default_conversation_id(self.messages, self.text, self.system_prompt)
            )
            object.__setattr__(self, "id", ident)
        return self

    def _take_conversation(self, messages: list[ChatMessage]) -> None:
        system, turns = split_system(messages)
        if system is not None and self.system_prompt is not None:
            raise ValueError(
                "the conversation starts with a system turn and the prompt sets system_prompt "
                "too: keep one of them"
            )
        problem = conversation_problem(turns, first=2 if system is not None else 1)
        if problem:
            raise ValueError(problem[1])
        text = last_user_text(turns)
        if not text.strip():
            raise ValueError("the conversation's last user turn is empty: give its content")
        if self.text and self.text != text:
            raise ValueError(
                "give `text` or `messages`, not both (a conversation's text is its last user turn)"
            )
        object.__setattr__(self, "messages", turns)
        object.__setattr__(self, "text", text)
        if system is not None:
            object.__setattr__(self, "system_prompt", system)

    def chat_messages(self, system_prompt: str | None = None) -> list[dict[str, Any]]:
        """What the model receives, in OpenAI's chat format: ``system_prompt`` (the one in
        force for this prompt) first, then the conversation, or the text as one user turn."""
        messages: list[dict[str, Any]] = []
        if system_prompt:
            messages.append({"role": "system", "content": system_prompt})
        if self.messages is None:
            messages.append({"role": "user", "content": self.text})
        else:
            messages.extend(m.wire() for m in self.messages)
        return messages


class ToolCall(BaseModel):
    """One native tool (function) call made by the model."""

    model_config = ConfigDict(frozen=True)

    name: str
    arguments: Any = None
    """Parsed arguments (usually a dict); ``None`` when ``arguments_raw`` is not valid JSON."""
    arguments_raw: str = ""
    id: str | None = None


class LLMResponse(BaseModel):
    """What the model answered to one prompt (one sample)."""

    model_config = ConfigDict(frozen=True)

    prompt_id: str
    provider_model_id: str
    content: str = ""
    tool_calls: list[ToolCall] = Field(default_factory=list)
    finish_reason: str | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    total_tokens: int | None = None
    latency_ms: float | None = None
    raw_response: dict[str, Any] = Field(default_factory=dict)
    sample: int = 0
    retries: int = 0
    error: str | None = None
    """Set when the call failed after its retries; such a response is *errored*, not scored."""
    created_at: datetime = Field(
        default_factory=_utcnow, validation_alias=AliasChoices("created_at", "timestamp")
    )
    """Named ``timestamp`` in PromptCanary 0.2.2 documents, which still load."""
    truncated_from: int | None = None
    """The text's length in characters when ``content`` holds only its first part (stored
    responses are kept to :data:`MAX_STORED_RESPONSE_CHARS`); ``None`` when kept whole."""
    embedding: str | None = None
    """The answer's vector when the suite compares meaning (``semantic_drift:``), encoded by
    :mod:`promptcanary.core.vectors`; the run's provenance names the embedding model."""
    served_model: str | None = None
    """The model id the provider says answered (``gpt-4o-2024-08-06`` for ``openai/gpt-4o``);
    ``None`` when it sent none. Read from ``raw_response`` for responses stored before."""
    system_fingerprint: str | None = None
    """The provider's ``system_fingerprint`` of the backend that answered, when it sends one."""
    rate_limit_headers: dict[str, str] | None = Field(default=None, exclude=True, repr=False)
    """The answer's rate-limit headers, for the run's pacing only (never stored)."""

    @model_validator(mode="before")
    @classmethod
    def _served_from_raw(cls, data: Any) -> Any:
        # Responses stored before these fields kept the same values in raw_response.
        if isinstance(data, dict) and isinstance(raw := data.get("raw_response"), dict):
            for name, key in (("served_model", "model"), ("system_fingerprint",) * 2):
                if data.get(name) is None and isinstance(raw.get(key), str) and raw[key]:
                    data = {**data, name: raw[key]}
        return data

    @property
    def errored(self) -> bool:
        return self.error is not None

    def bounded(self, limit: int = MAX_STORED_RESPONSE_CHARS) -> LLMResponse:
        """This response as stored: ``content`` cut to ``limit`` characters, the cut noted."""
        if len(self.content) <= limit:
            return self
        return self.model_copy(
            update={
                "content": self.content[:limit],
                "truncated_from": self.truncated_from or len(self.content),
            }
        )

    @property
    def timestamp(self) -> datetime:
        """The name PromptCanary 0.2.2 used for :attr:`created_at`."""
        return self.created_at


class ProbeResult(BaseModel):
    """Result of running a single probe against a single LLMResponse."""

    model_config = ConfigDict(frozen=True)

    probe_id: str
    probe_name: str = ""
    category: ProbeCategory = ProbeCategory.CUSTOM
    prompt_id: str
    passed: bool
    score: float = Field(ge=0.0, le=1.0)
    details: str = ""
    metadata: dict[str, Any] = Field(default_factory=dict)
    probe_key: str = ""
    """Identity of the probe entry in comparisons; defaults to ``probe_id``."""
    sample: int = 0
    errored: bool = False
    """True when the response could not be obtained: neither a pass nor a failure."""

    @model_validator(mode="after")
    def _default_key(self) -> ProbeResult:
        if not self.probe_key:
            object.__setattr__(self, "probe_key", self.probe_id)
        return self


class ProviderConfig(BaseModel):
    """Identifies and configures an LLM provider + model endpoint."""

    model_config = ConfigDict(frozen=True)

    model_id: str
    temperature: float = 0.0
    max_tokens: int = 1024
    seed: int | None = 42
    extra_params: dict[str, Any] = Field(default_factory=dict)
    rpm: int | None = Field(default=None, ge=1)
    """Requests per minute the model's key may send (``rpm:``); ``None``: learnt from headers."""
    tpm: int | None = Field(default=None, ge=1)
    """Tokens per minute the model's key may spend (``tpm:``); ``None``: learnt from headers."""

    @field_validator("model_id")
    @classmethod
    def model_id_must_be_nonempty(cls, v: str) -> str:
        # Stripped: a baseline keyed by "  openai/gpt-4o " would never match the next run.
        if not v.strip():
            raise ValueError("model_id must not be empty: give a LiteLLM model id (openai/gpt-4o)")
        return v.strip()

    @field_validator("temperature")
    @classmethod
    def _temperature_in_range(cls, v: float) -> float:
        if not TEMPERATURE_RANGE[0] <= v <= TEMPERATURE_RANGE[1]:
            low, high = TEMPERATURE_RANGE
            raise ValueError(
                f"temperature={v!r} is out of range; it must be within [{low:g}, {high:g}]"
            )
        return v

    @field_validator("max_tokens")
    @classmethod
    def _max_tokens_positive(cls, v: int) -> int:
        if not 1 <= v <= MAX_TOKENS_CAP:
            raise ValueError(
                f"max_tokens={v!r} is out of range; it must be an integer >= 1 and <= "
                f"{MAX_TOKENS_CAP}"
            )
        return v


class TokenUsage(BaseModel):
    """Token counts summed over a run."""

    model_config = ConfigDict(frozen=True)

    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0


class AdaptiveSampling(BaseModel):
    """How a ``samples: auto`` run sampled: the procedure's knobs and what it spent.

    The knobs are kept so that a comparison can replay the run's decisions from its answers.
    """

    model_config = ConfigDict(frozen=True)

    min_samples: int
    max_samples: int
    alpha: float = DEFAULT_ALPHA
    margin: float = 0.5
    futility_level: float = 1 / 16
    baseline_samples: int = 1
    """Answers per prompt the run built the pool to (runs recorded before it existed: 1)."""
    top_up: bool = False
    """Whether the run topped up prompts whose pool was too small (a run that may be promoted)."""
    pool_runs: int = 0
    """Promoted runs in the baseline pool the run decided against (0: no baseline)."""
    stages: int = 1
    prompts: int = 0
    """Prompts asked; ``prompts * max_samples`` requests is what fixed sampling would cost."""
    requests: int = 0
    """Requests actually sent (errored ones included)."""
    tokens: int = 0
    """Tokens the provider reported for them."""

    @computed_field  # type: ignore[prop-decorator]
    @property
    def fixed_requests(self) -> int:
        """What fixed ``samples: max_samples`` would have sent."""
        return self.prompts * self.max_samples

    @computed_field  # type: ignore[prop-decorator]
    @property
    def fixed_tokens(self) -> int:
        """Tokens fixed ``samples: max_samples`` would have used, at this run's tokens a request."""
        return round(self.tokens * self.fixed_requests / self.requests) if self.requests else 0


class ScoreSummary(BaseModel):
    """Pass count and score moments of one (prompt, probe) in one run (errored answers left out)."""

    model_config = ConfigDict(frozen=True)

    n: int = 0
    passes: int = 0
    score_sum: float = 0.0
    score_sq_sum: float = 0.0

    def __add__(self, other: ScoreSummary) -> ScoreSummary:
        return ScoreSummary(
            n=self.n + other.n,
            passes=self.passes + other.passes,
            score_sum=self.score_sum + other.score_sum,
            score_sq_sum=self.score_sq_sum + other.score_sq_sum,
        )

    @property
    def mean(self) -> float | None:
        return self.score_sum / self.n if self.n else None

    @property
    def sd(self) -> float | None:
        """Sample standard deviation of the scores (``None`` below two answers)."""
        if self.n < 2:
            return None
        mean = self.score_sum / self.n
        return max(0.0, (self.score_sq_sum - self.n * mean * mean) / (self.n - 1)) ** 0.5


class EmbeddingInfo(BaseModel):
    """The embedding model behind a run's answer vectors, and its answer to a fixed text."""

    model_id: str
    dimension: int
    check: str = ""
    """The vector of :data:`promptcanary.core.vectors.CHECK_TEXT`, encoded: a model that now
    returns other vectors for the same text is not compared with its old vectors."""
    errors: list[str] = Field(default_factory=list)
    """The distinct reasons answers (or the check text) got no vector, first ones first."""
    prompts: list[str] = Field(default_factory=list)
    """The prompts whose meaning the run compares."""
    min_shift: float = 0.05
    """The suite's ``semantic_drift: min_shift`` when the run was made."""


class PoolEntry(BaseModel):
    """One promoted run, compactly: what a pooled baseline needs of it."""

    model_config = ConfigDict(frozen=True)

    run_id: str
    created_at: datetime
    prompt_hashes: dict[str, str] = Field(default_factory=dict)
    texts: dict[str, str] = Field(default_factory=dict)
    """prompt id → digest of its answer, for prompts whose every answer was that one text."""
    results: dict[str, dict[str, ScoreSummary]] = Field(default_factory=dict)
    vectors: dict[str, list[str]] = Field(default_factory=dict)
    """prompt id → its answers' vectors (``semantic_drift:``), encoded; empty before it existed."""
    embedding: EmbeddingInfo | None = None
    """The embedding model of ``vectors``: another model's vectors are never compared."""
    """prompt id → probe key → summary."""


DEFAULT_JUDGE_TOLERANCE = 0.4
"""``judge: tolerance`` by default: the share of the canaries' verdicts that may disagree with
their expected verdict before a run's judged comparisons are inconclusive (bench/judge_drift.py
measures the error rates at this value: a steady judge flipping one verdict in five stays under
it in about 98% of runs at 15 votes a canary, a stricter one is caught in over 95%)."""


class JudgeCheckResult(BaseModel):
    """One of the judge's own canaries (``judge_checks:``) on this run: what was expected, what
    the judge said on each vote, and why it could not say (errors)."""

    index: int
    expected: str
    verdicts: list[str] = Field(default_factory=list)
    """``pass``/``fail`` per vote answered; votes that errored are left out."""
    errors: list[str] = Field(default_factory=list)

    @property
    def disagreements(self) -> int:
        return sum(1 for v in self.verdicts if v != self.expected)


class JudgeInfo(BaseModel):
    """The judge behind a run's judged results: the models and fingerprints it answered with,
    its canaries' results, and how many verdicts the request cap left unasked."""

    models: list[str] = Field(default_factory=list)
    """The judge model ids as the judge's answers named them (sorted)."""
    fingerprints: list[str] = Field(default_factory=list)
    """The ``system_fingerprint`` s the judge's answers carried (sorted; empty when none)."""
    checks: list[JudgeCheckResult] = Field(default_factory=list)
    tolerance: float = DEFAULT_JUDGE_TOLERANCE
    """The largest share of canary verdicts that may disagree with their expected verdict."""
    capped: int = 0
    """Judge requests not sent because ``max-judge-requests`` was reached."""
    attenuation: dict[str, float] = Field(default_factory=dict)
    """probe key → the share of a pass-rate drop that probe's verdicts show, bounded from the
    canaries' disagreements (``samples: auto`` rules out and chases the shrunk drop); empty
    without canaries."""

    @property
    def votes(self) -> int:
        return sum(len(c.verdicts) for c in self.checks)

    @property
    def disagreements(self) -> int:
        return sum(c.disagreements for c in self.checks)


class Provenance(BaseModel):
    """Where a run came from: enough to tell whether two runs are comparable."""

    suite_hash: str = ""
    probe_config_hash: str = ""
    engine_version: str = ""
    samples: int = 1
    git_sha: str | None = None
    git_ref: str | None = None
    prompt_hashes: dict[str, str] = Field(default_factory=dict)
    """prompt id → hash of what was sent (text, system prompt, tools, response format), in
    suite order: every prompt of the suite, also in a shard's run."""
    adaptive: AdaptiveSampling | None = None
    """Set for a ``samples: auto`` run; ``samples`` is then the most answers any prompt got."""
    shard: str | None = None
    embedding: EmbeddingInfo | None = None
    """Set when the answers carry vectors (``semantic_drift:``)."""
    judge: JudgeInfo | None = None
    """Set when the suite judges answers with an LLM (``llm_judge`` probes, ``judge_checks:``)."""
    """``i/n`` when the run answered one shard of the suite (see ``promptcanary.core.run.shards``);
    ``None`` for a whole run, also one merged from shards."""


def _mean(values: list[float], empty: float = 1.0) -> float:
    return sum(values) / len(values) if values else empty


class ServiceUsage(BaseModel):
    """What one answer service (embeddings, a judge) cost a run, counted apart from the model's."""

    service: str
    model_id: str
    requests: int = 0
    """Requests sent, retries included."""
    items: int = 0
    """Distinct inputs served (equal content is sent once per run)."""
    tokens: int = 0
    cost_usd: float | None = None
    """``None`` when the service's price is unknown."""
    errors: int = 0
    """Inputs that could not be served after their retries."""


class CanaryRunResult(BaseModel):
    """Aggregated results for one full run of a CanarySuite against one provider.

    Errored results (no response could be obtained) are kept but excluded from the scores.
    """

    run_id: str = Field(default_factory=_new_uuid)
    suite_name: str
    provider: ProviderConfig
    probe_results: list[ProbeResult] = Field(default_factory=list)
    llm_responses: list[LLMResponse] = Field(default_factory=list)
    started_at: datetime = Field(default_factory=_utcnow)
    finished_at: datetime | None = None
    provenance: Provenance = Field(default_factory=Provenance)
    services: list[ServiceUsage] = Field(default_factory=list)
    """The answer services the run used (embeddings, judges), each counted apart."""
    incomplete: str | None = None
    """Why the run stopped before every prompt was answered (e.g. the job was cancelled); the
    unanswered ones are errored responses. ``None`` for a complete run."""
    rate_limited: int = 0
    """Answers that were HTTP 429 (rate limited), retried or not."""
    paced_seconds: float = 0.0
    """Seconds this run's requests waited for the provider's rate limit, summed over requests."""

    def _scored(self) -> list[ProbeResult]:
        return [r for r in self.probe_results if not r.errored]

    def _per_prompt(self, value: Callable[[ProbeResult], float]) -> float | None:
        """The headline figure: each prompt's mean ``value`` over its scored results, then the
        mean over prompts, so that a prompt ``samples: auto`` asked more does not weigh more.
        ``None`` when nothing was scored (an all-errored run measured nothing)."""
        per_prompt: dict[str, list[float]] = defaultdict(list)
        for r in self._scored():
            per_prompt[r.prompt_id].append(value(r))
        if not per_prompt:
            return None
        return sum(sum(v) / len(v) for v in per_prompt.values()) / len(per_prompt)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def overall_score(self) -> float | None:
        """Mean over prompts of each prompt's mean score; ``None`` when nothing was scored."""
        return self._per_prompt(lambda r: r.score)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def pass_rate(self) -> float | None:
        """Mean over prompts of each prompt's share of passed results; ``None`` when nothing
        was scored."""
        return self._per_prompt(lambda r: 1.0 if r.passed else 0.0)

    @property
    def scored(self) -> bool:
        """True when at least one result was scored: a run with none has measured nothing."""
        return bool(self._scored())

    @property
    def failed_probes(self) -> list[ProbeResult]:
        """Convenience: all probe results that did not pass (errored ones excluded)."""
        return [r for r in self._scored() if not r.passed]

    @property
    def errored_results(self) -> list[ProbeResult]:
        return [r for r in self.probe_results if r.errored]

    @property
    def by_category(self) -> dict[ProbeCategory, list[ProbeResult]]:
        """Group probe results by category."""
        groups: dict[ProbeCategory, list[ProbeResult]] = defaultdict(list)
        for r in self.probe_results:
            groups[r.category].append(r)
        return dict(groups)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def duration_ms(self) -> float:
        """Total wall-clock duration of the run in milliseconds."""
        if self.finished_at is None:
            return 0.0
        return (self.finished_at - self.started_at).total_seconds() * 1000

    @computed_field  # type: ignore[prop-decorator]
    @property
    def token_usage(self) -> TokenUsage:
        return TokenUsage(
            prompt_tokens=sum(r.prompt_tokens or 0 for r in self.llm_responses),
            completion_tokens=sum(r.completion_tokens or 0 for r in self.llm_responses),
            total_tokens=sum(r.total_tokens or 0 for r in self.llm_responses),
        )

    @computed_field  # type: ignore[prop-decorator]
    @property
    def error_count(self) -> int:
        """Responses that could not be obtained after their retries."""
        return sum(1 for r in self.llm_responses if r.errored)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def error_rate(self) -> float:
        return self.error_count / len(self.llm_responses) if self.llm_responses else 0.0

    @computed_field  # type: ignore[prop-decorator]
    @property
    def retry_count(self) -> int:
        return sum(r.retries for r in self.llm_responses)

    @property
    def prompt_ids(self) -> list[str]:
        """Prompt ids in run order, each once."""
        return list(dict.fromkeys(r.prompt_id for r in self.llm_responses))

    def responses_for(self, prompt_id: str) -> list[LLMResponse]:
        return [r for r in self.llm_responses if r.prompt_id == prompt_id]


class RegressionKey(BaseModel):
    """Names one regressed result across suites and models: what an approval is bound to."""

    model_config = ConfigDict(frozen=True)

    suite: str
    model: str
    prompt_id: str
    probe_key: str

    def sort_key(self) -> tuple[str, str, str, str]:
        return (self.suite, self.model, self.prompt_id, self.probe_key)


class Approval(BaseModel):
    """A reviewer's acceptance of a set of regressions as the intended new behaviour.

    Bound to exactly the keys that were shown when it was given (and the pull-request head
    commit they were measured on): a regression outside ``keys`` is not approved by it.
    """

    model_config = ConfigDict(frozen=True)

    keys: tuple[RegressionKey, ...]
    head_sha: str
    """The pull request's head commit whose drift was approved."""
    pr_number: int
    approver: str
    """The login that gave the approval (an untrusted string: escape it wherever shown)."""
    approved_at: datetime
    label: str = ""

    @field_validator("keys")
    @classmethod
    def _sorted_unique(cls, v: tuple[RegressionKey, ...]) -> tuple[RegressionKey, ...]:
        # One set, one order: the fingerprint must not depend on the order keys were found in.
        return tuple(sorted(set(v), key=RegressionKey.sort_key))

    @computed_field  # type: ignore[prop-decorator]
    @property
    def fingerprint(self) -> str:
        """A short, deterministic id of (head commit, approved keys)."""
        lines = [self.head_sha, *("\x00".join(k.sort_key()) for k in self.keys)]
        return hashlib.sha256("\n".join(lines).encode()).hexdigest()[:16]


class BaselineSnapshot(BaseModel):
    """A saved baseline — the "known-good" state a future run is compared against."""

    model_config = ConfigDict(frozen=True)

    schema_version: int = SCHEMA_VERSION
    snapshot_id: str = Field(default_factory=_new_uuid)
    suite_name: str
    provider: ProviderConfig
    run_result: CanaryRunResult
    pool: list[PoolEntry] = Field(default_factory=list)
    """The last promoted runs, newest (this one) first; empty in older documents (pool of one)."""
    created_at: datetime = Field(default_factory=_utcnow)
    note: str = ""
    approval: Approval | None = None
    """Set when this run became the baseline although it regressed, because a reviewer
    approved those regressions (which pull request, who, and the approved fingerprint)."""

    @classmethod
    def of_run(
        cls, run: CanaryRunResult, *, note: str = "", approval: Approval | None = None
    ) -> BaselineSnapshot:
        """The snapshot that makes ``run`` a baseline: keyed by the run's suite and provider."""
        return cls(
            suite_name=run.suite_name,
            provider=run.provider,
            run_result=run,
            note=note,
            approval=approval,
        )

    @field_validator("schema_version")
    @classmethod
    def _known_version(cls, v: int) -> int:
        if v > SCHEMA_VERSION:
            raise ValueError(
                f"snapshot schema_version {v} is newer than this engine supports "
                f"({SCHEMA_VERSION}); upgrade promptcanary-action or re-create the baseline"
            )
        return v


class MeaningShift(BaseModel):
    """What a meaning comparison (probe key ``semantic``) found, for reports."""

    model_config = ConfigDict(frozen=True)

    embedding_model: str
    min_shift: float
    shift: float | None = None
    """The centroid shift ``½‖μ_current − μ_baseline‖²`` of the unit answer vectors."""
    shift_ci: tuple[float, float] | None = None
    """Estimate ± 1.96 jackknife standard errors (descriptive, like ``pass_rate_ci``)."""
    reason: str | None = None
    """Why the answers were not compared (the verdict is then *inconclusive*)."""
    moved_answer: str | None = None
    """Today's answer farthest from the baseline's answers (the one that moved most)."""
    moved_sample: int | None = None
    nearest_baseline_answer: str | None = None
    """The baseline answer nearest to :attr:`moved_answer`."""
    similarity: float | None = None
    """Cosine similarity of those two answers."""


class ProbeComparison(BaseModel):
    """Side-by-side comparison of a single probe between baseline and current run.

    With repeated samples the scores are means over samples and the statistics fields are set.
    """

    model_config = ConfigDict(frozen=True)

    probe_id: str
    probe_key: str = ""
    probe_name: str = ""
    category: ProbeCategory = ProbeCategory.CUSTOM
    prompt_id: str
    baseline_score: float
    current_score: float
    score_delta: float
    baseline_passed: bool
    current_passed: bool
    regression: bool = False
    improvement: bool = False
    baseline_details: str = ""
    current_details: str = ""
    baseline_samples: int = 1
    current_samples: int = 1
    baseline_pass_rate: float | None = None
    current_pass_rate: float | None = None
    pass_rate_ci: tuple[float, float] | None = None
    """Confidence interval of (current − baseline) pass rate."""
    score_ci: tuple[float, float] | None = None
    """Confidence interval of (current − baseline) mean score."""
    p_value: float | None = None
    p_adjusted: float | None = None
    flaky: bool = False
    verdict: str | None = None
    """``samples: auto`` only: same, regressed, improved or inconclusive."""
    e_value: float | None = None
    """``samples: auto`` only: the evidence for the verdict's direction (``p_value`` is 1/e)."""
    semantic: MeaningShift | None = None
    """Set on a meaning comparison (``semantic_drift:``, probe key ``semantic``)."""
    settle: str | None = None
    """``samples: auto``, inconclusive only: what would settle the comparison."""

    @property
    def inconclusive(self) -> bool:
        return self.verdict == "inconclusive"

    @model_validator(mode="after")
    def _default_key(self) -> ProbeComparison:
        if not self.probe_key:
            object.__setattr__(self, "probe_key", self.probe_id)
        return self

    @property
    def absolute_delta(self) -> float:
        return abs(self.score_delta)


class ResultRef(BaseModel):
    """Names one result row: a probe entry on a prompt."""

    model_config = ConfigDict(frozen=True)

    prompt_id: str
    probe_key: str


class ErroredResult(BaseModel):
    """A (prompt, probe) pair whose response could not be obtained on one side."""

    model_config = ConfigDict(frozen=True)

    prompt_id: str
    probe_key: str
    side: str  # "baseline" or "current"
    error: str = ""


_SEVERITY_RULES: tuple[tuple[DriftSeverity, float, float], ...] = (
    # (severity, share of comparisons regressed, largest single drop) — either one suffices.
    (DriftSeverity.CRITICAL, 0.25, 0.75),
    (DriftSeverity.HIGH, 0.10, 0.50),
    (DriftSeverity.MEDIUM, 0.05, 0.25),
)


def severity_explanation() -> str:
    """One line that says what each severity means (shown wherever a severity is)."""
    first, *rest = _SEVERITY_RULES
    parts = [
        f"{first[0].value} when ≥ {first[1]:.0%} of comparisons regressed or one score dropped by "
        f"≥ {first[2]:g}",
        *(f"{sev.value} ≥ {share:.0%} or ≥ {drop:g}" for sev, share, drop in rest),
        "low: any other regression",
    ]
    return "Severity: " + " · ".join(parts) + "."


class DriftReport(BaseModel):
    """The authoritative, fully-structured output of a drift comparison."""

    model_config = ConfigDict(frozen=True)

    suite_name: str
    provider: ProviderConfig
    baseline_snapshot_id: str
    baseline_created_at: datetime
    current_run_id: str
    comparisons: list[ProbeComparison] = Field(default_factory=list)
    new_prompts: list[str] = Field(default_factory=list)
    removed_prompts: list[str] = Field(default_factory=list)
    new_probes: list[ResultRef] = Field(default_factory=list)
    """Probe entries scored now but not in the baseline (on prompts present in both)."""
    removed_probes: list[ResultRef] = Field(default_factory=list)
    errored: list[ErroredResult] = Field(default_factory=list)
    warnings: list[str] = Field(default_factory=list)
    rescored_responses: int = 0
    baseline_provider: ProviderConfig | None = None
    statistical: bool = False
    """True when the verdicts come from repeated-sample significance tests."""
    alpha: float | None = None
    adaptive: AdaptiveSampling | None = None
    """Set when the verdicts come from ``samples: auto`` (the run's procedure and its spend)."""
    baseline_pool_runs: int = 1
    """Promoted runs pooled as the baseline (``samples: auto``)."""
    created_at: datetime = Field(
        default_factory=_utcnow, validation_alias=AliasChoices("created_at", "generated_at")
    )
    """Named ``generated_at`` in PromptCanary 0.2.2 documents, which still load."""

    @computed_field  # type: ignore[prop-decorator]
    @property
    def regressions(self) -> list[ProbeComparison]:
        return [c for c in self.comparisons if c.regression]

    @computed_field  # type: ignore[prop-decorator]
    @property
    def improvements(self) -> list[ProbeComparison]:
        return [c for c in self.comparisons if c.improvement]

    @computed_field  # type: ignore[prop-decorator]
    @property
    def flaky(self) -> list[ProbeComparison]:
        return [c for c in self.comparisons if c.flaky]

    @computed_field  # type: ignore[prop-decorator]
    @property
    def inconclusive(self) -> list[ProbeComparison]:
        """``samples: auto``: comparisons that neither a regression nor "same" settled."""
        return [c for c in self.comparisons if c.inconclusive]

    @computed_field  # type: ignore[prop-decorator]
    @property
    def has_regressions(self) -> bool:
        return any(c.regression for c in self.comparisons)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def baseline_score(self) -> float:
        return _mean([c.baseline_score for c in self.comparisons])

    @computed_field  # type: ignore[prop-decorator]
    @property
    def current_score(self) -> float:
        return _mean([c.current_score for c in self.comparisons])

    @computed_field  # type: ignore[prop-decorator]
    @property
    def score_delta(self) -> float:
        return self.current_score - self.baseline_score

    # ── PromptCanary 0.2.2 names (plain properties: drift.json keeps its shape) ──────────────

    @property
    def has_drift(self) -> bool:
        """True when any comparison regressed (the name scripts gate on)."""
        return self.has_regressions

    @property
    def overall_baseline_score(self) -> float:
        return self.baseline_score

    @property
    def overall_current_score(self) -> float:
        return self.current_score

    @property
    def overall_score_delta(self) -> float:
        """Current minus baseline mean score over the comparisons (negative = worse)."""
        return self.score_delta

    @property
    def stable(self) -> list[ProbeComparison]:
        """Comparisons that neither regressed nor improved."""
        return [c for c in self.comparisons if not c.regression and not c.improvement]

    @property
    def generated_at(self) -> datetime:
        return self.created_at

    @property
    def report_id(self) -> str:
        """Deterministic: the same baseline compared with the same run has the same id."""
        digest = hashlib.sha256(f"{self.baseline_snapshot_id}\x00{self.current_run_id}".encode())
        return str(uuid.UUID(digest.hexdigest()[:32]))

    @computed_field  # type: ignore[prop-decorator]
    @property
    def severity(self) -> DriftSeverity:
        """Heuristic severity rating based on regression count and magnitude."""
        regs = self.regressions
        if not regs:
            return DriftSeverity.NONE
        share = len(regs) / len(self.comparisons)
        worst_drop = max(-c.score_delta for c in regs)
        for severity, min_share, min_drop in _SEVERITY_RULES:
            if share >= min_share or worst_drop >= min_drop:
                return severity
        return DriftSeverity.LOW

    @computed_field  # type: ignore[prop-decorator]
    @property
    def summary(self) -> str:
        """Single-sentence human-readable summary suitable for notifications."""
        n_reg, n_imp = len(self.regressions), len(self.improvements)
        parts = [
            f"{self.suite_name} on {self.provider.model_id}:",
            f"{plural(n_reg, 'regression')},",
            plural(n_imp, "improvement"),
            f"across {plural(len(self.comparisons), 'comparison')}",
            f"(score {self.baseline_score:.3f} → {self.current_score:.3f},",
            f"severity {self.severity.value}).",
        ]
        return " ".join(parts)
