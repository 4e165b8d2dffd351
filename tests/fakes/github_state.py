"""State, JSON builders and OpenAPI validation for the fake GitHub REST server.

`OpenAPISubset` loads tests/fakes/github_openapi.json (made by scripts/extract_github_openapi.py)
and validates instances with openapi-schema-validator's OAS 3.0 validators (jsonschema underneath,
understands `nullable`, `readOnly`/`writeOnly`, OAS formats). Validators are compiled once per
schema and cached.

`GitHubState` holds what the server knows (repositories, issues and pull requests sharing one
number sequence, comments, check runs, artifacts and workflow runs) and renders GitHub's JSON for
them. The long tail of required-but-irrelevant fields (a repository has 75 required keys, most of
them URL templates) is filled from the schema by `OpenAPISubset.skeleton`; every field the action
or PyGithub reads is set explicitly, and every response is validated anyway.
"""

from __future__ import annotations

import functools
import itertools
import json
import threading
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from openapi_schema_validator import (
    OAS30ReadValidator,
    OAS30WriteValidator,
    oas30_format_checker,
)
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT4

SPEC_PATH = Path(__file__).with_name("github_openapi.json")
SPEC_URI = "urn:github-openapi-subset"
DOCS = "https://docs.github.com/rest"
HTML = "https://github.com"


def iso(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def deep_merge(base: Any, over: Any) -> Any:
    if isinstance(base, dict) and isinstance(over, dict):
        merged = dict(base)
        for key, value in over.items():
            merged[key] = deep_merge(base.get(key), value) if key in base else value
        return merged
    return over


class OpenAPISubset:
    """The committed subset of GitHub's OpenAPI description, with cached validators."""

    def __init__(self, path: Path = SPEC_PATH) -> None:
        self.spec = json.loads(path.read_text())
        resource = Resource.from_contents(self.spec, default_specification=DRAFT4)
        self.registry = Registry().with_resource(SPEC_URI, resource)
        self._validators: dict[tuple[str, str], Any] = {}
        self._lock = threading.Lock()

    def resolve(self, node: Any) -> Any:
        while isinstance(node, dict) and "$ref" in node:
            node = self.at(node["$ref"])
        return node

    def at(self, pointer: str) -> Any:
        target: Any = self.spec
        for part in pointer[2:].split("/"):
            target = target[part.replace("~1", "/").replace("~0", "~")]
        return target

    @staticmethod
    def pointer(*parts: str | int) -> str:
        return "#/" + "/".join(str(p).replace("~", "~0").replace("/", "~1") for p in parts)

    def operation(self, method: str, template: str) -> dict:
        return self.spec["paths"][template][method.lower()]

    def parameters(self, method: str, template: str) -> list[tuple[dict, str]]:
        """(parameter object, JSON pointer to its schema) for the operation's parameters."""
        out = []
        for where in ("parameters", method.lower()):
            holder = self.spec["paths"][template].get(where, {})
            params = holder if where == "parameters" else holder.get("parameters", [])
            for i, param in enumerate(params):
                base = (
                    param["$ref"]
                    if "$ref" in param
                    else self.pointer(
                        "paths",
                        template,
                        *([] if where == "parameters" else [where]),
                        "parameters",
                        i,
                    )
                )
                out.append((self.resolve(param), base + "/schema"))
        return out

    def request_body(self, method: str, template: str) -> tuple[str | None, bool]:
        """(JSON pointer to the JSON request body schema, required) or (None, False)."""
        body = self.operation(method, template).get("requestBody")
        if not body:
            return None, False
        base = (
            body["$ref"]
            if "$ref" in body
            else self.pointer("paths", template, method.lower(), "requestBody")
        )
        return base + "/content/application~1json/schema", bool(self.resolve(body).get("required"))

    def response_schema(self, method: str, template: str, status: int) -> tuple[bool, str | None]:
        """(status declared?, JSON pointer to its JSON body schema or None when it has no body)."""
        responses = self.operation(method, template)["responses"]
        key = (
            str(status)
            if str(status) in responses
            else "default"
            if "default" in responses
            else None
        )
        if key is None:
            return False, None
        resp = responses[key]
        base = (
            resp["$ref"]
            if "$ref" in resp
            else self.pointer("paths", template, method.lower(), "responses", key)
        )
        if "application/json" not in self.resolve(resp).get("content", {}):
            return True, None
        return True, base + "/content/application~1json/schema"

    def errors(self, pointer: str, instance: Any, *, write: bool) -> list:
        """jsonschema errors of `instance` against the schema at `pointer` in the spec."""
        key = (pointer, write)
        with self._lock:
            validator = self._validators.get(key)
            if validator is None:
                cls = OAS30WriteValidator if write else OAS30ReadValidator
                validator = cls(
                    {"$ref": SPEC_URI + pointer},
                    registry=self.registry,
                    format_checker=oas30_format_checker,
                )
                self._validators[key] = validator
        return sorted(validator.iter_errors(instance), key=lambda e: list(e.absolute_path))

    def skeleton(self, schema: Any, key: str = "") -> Any:
        """A minimal instance of `schema`: every required property, placeholder values."""
        schema = self.resolve(schema)
        if "allOf" in schema:
            return functools.reduce(
                deep_merge, (self.skeleton(s, key) for s in schema["allOf"]), {}
            )
        for combinator in ("oneOf", "anyOf"):
            if combinator in schema:
                return self.skeleton(schema[combinator][0], key)
        if schema.get("nullable"):
            return None
        if "enum" in schema:
            return schema["enum"][0]
        kind = schema.get("type")
        if kind == "object" or "properties" in schema:
            props = schema.get("properties", {})
            return {
                name: self.skeleton(props[name], name)
                for name in schema.get("required", [])
                if name in props
            }
        if kind == "array":
            return []
        if kind in ("integer", "number"):
            return 0
        if kind == "boolean":
            return False
        if schema.get("format") == "date-time":
            return "2024-01-01T00:00:00Z"
        if schema.get("format") == "uri" or key.endswith("url"):
            return f"https://placeholder.invalid/{key}"
        return ""

    def build(self, schema_name: str, **overrides: Any) -> dict:
        schema = {**self.at(f"#/components/schemas/{schema_name}"), "nullable": False}
        return deep_merge(self.skeleton(schema), overrides)


@dataclass
class Repo:
    id: int
    owner: str
    name: str
    default_branch: str = "main"
    private: bool = False
    owner_type: str = "Organization"

    @property
    def full_name(self) -> str:
        return f"{self.owner}/{self.name}"


@dataclass
class Issue:
    number: int
    id: int
    title: str
    body: str | None
    user: tuple[str, str]  # (login, type)
    created_at: str
    updated_at: str
    state: str = "open"
    state_reason: str | None = None
    closed_at: str | None = None
    labels: list[str] = field(default_factory=list)
    assignees: list[str] = field(default_factory=list)
    pull: dict | None = None  # head/base data when this issue is a pull request
    merged_at: str | None = None
    merge_commit_sha: str | None = None


@dataclass
class IssueEvent:
    """One ``labeled``/``unlabeled`` event of an issue or pull request."""

    id: int
    issue_number: int
    event: str
    actor: str
    label: str
    created_at: str


@dataclass
class Comment:
    id: int
    issue_number: int
    body: str
    user: tuple[str, str]
    created_at: str
    updated_at: str


@dataclass
class CheckRun:
    id: int
    name: str
    head_sha: str
    status: str
    conclusion: str | None
    started_at: str
    completed_at: str | None
    details_url: str | None = None
    external_id: str | None = None
    title: str | None = None
    summary: str | None = None
    text: str | None = None
    annotations: list[dict] = field(default_factory=list)
    updates: int = 0


@dataclass
class Artifact:
    id: int
    name: str
    data: bytes
    run_id: int
    expired: bool
    created_at: str
    expires_at: str
    blob_key: str
    without_length: bool = False
    """Serve the blob with no Content-Length (read to the end of the connection)."""


@dataclass
class WorkflowRun:
    id: int
    head_branch: str
    head_sha: str
    event: str
    status: str
    conclusion: str | None
    created_at: str


BOT = ("github-actions[bot]", "Bot")


class GitHubState:
    """Everything the fake knows, plus GitHub's JSON for it. Guard with `lock` from handlers."""

    def __init__(self, api: OpenAPISubset, owner: str, repo: str, default_branch: str) -> None:
        self.api = api
        self.base_url = ""  # set by the server once it knows its port
        self.blob_base = ""
        self.lock = threading.RLock()
        self._ids = itertools.count(1001)
        self.repo = Repo(id=next(self._ids), owner=owner, name=repo, default_branch=default_branch)
        self.issues: dict[int, Issue] = {}
        self.comments: dict[int, Comment] = {}
        self.check_runs: dict[int, CheckRun] = {}
        self.artifacts: dict[int, Artifact] = {}
        self.runs: dict[int, WorkflowRun] = {}
        self.labels: dict[str, int] = {}
        self.events: list[IssueEvent] = []
        self.user_ids: dict[str, int] = {BOT[0]: 41898282}

    # -- clock and ids -------------------------------------------------------------------------
    def now(self) -> str:
        return iso(datetime.now(UTC))

    def next_id(self) -> int:
        return next(self._ids)

    def next_number(self) -> int:
        return max(self.issues, default=0) + 1

    # -- JSON builders -------------------------------------------------------------------------
    @property
    def repo_url(self) -> str:
        return f"{self.base_url}/repos/{self.repo.full_name}"

    def user_json(self, login: str, kind: str = "User") -> dict:
        uid = self.user_ids.setdefault(login, 500000 + len(self.user_ids))
        url = f"{self.base_url}/users/{login}"
        return self.api.build(
            "simple-user",
            login=login,
            id=uid,
            node_id=f"U_{uid}",
            type=kind,
            url=url,
            html_url=f"{HTML}/{login}",
            avatar_url=f"{HTML}/{login}.png",
            repos_url=f"{url}/repos",
        )

    def repo_json(
        self, schema: str = "full-repository", *, owner: str | None = None, fork: bool = False
    ) -> dict:
        owner = owner or self.repo.owner
        full = f"{owner}/{self.repo.name}"
        url = f"{self.base_url}/repos/{full}"
        extra: dict[str, Any] = {}
        if schema != "minimal-repository":
            extra = dict(
                default_branch=self.repo.default_branch,
                clone_url=f"{HTML}/{full}.git",
                open_issues_count=sum(i.state == "open" for i in self.issues.values()),
            )
        owner_type = self.repo.owner_type if owner == self.repo.owner else "User"
        return self.api.build(
            schema,
            id=self.repo.id if not fork else self.repo.id + 7,
            node_id=f"R_{full}",
            name=self.repo.name,
            full_name=full,
            owner=self.user_json(owner, owner_type),
            private=self.repo.private,
            fork=fork,
            url=url,
            html_url=f"{HTML}/{full}",
            issues_url=f"{url}/issues{{/number}}",
            pulls_url=f"{url}/pulls{{/number}}",
            comments_url=f"{url}/comments{{/number}}",
            **extra,
        )

    def label_json(self, name: str) -> dict:
        lid = self.labels.setdefault(name, self.next_id())
        return {
            "id": lid,
            "node_id": f"LA_{lid}",
            "url": f"{self.repo_url}/labels/{name}",
            "name": name,
            "description": None,
            "color": "ededed",
            "default": False,
        }

    def _issue_fields(self, issue: Issue) -> dict[str, Any]:
        """The fields an issue and a pull request share (on GitHub a pull request is an issue)."""
        return {
            "id": issue.id,
            "number": issue.number,
            "title": issue.title,
            "body": issue.body,
            "state": issue.state,
            "locked": False,
            "user": self.user_json(*issue.user),
            "labels": [self.label_json(n) for n in issue.labels],
            "created_at": issue.created_at,
            "updated_at": issue.updated_at,
            "closed_at": issue.closed_at,
        }

    def issue_json(self, issue: Issue) -> dict:
        url = f"{self.repo_url}/issues/{issue.number}"
        extra: dict[str, Any] = {}
        if issue.pull is not None:
            pull_url = f"{self.repo_url}/pulls/{issue.number}"
            html = f"{HTML}/{self.repo.full_name}/pull/{issue.number}"
            extra["pull_request"] = {
                "url": pull_url,
                "html_url": html,
                "diff_url": f"{html}.diff",
                "patch_url": f"{html}.patch",
                "merged_at": None,
            }
        return self.api.build(
            "issue",
            **self._issue_fields(issue),
            node_id=f"I_{issue.id}",
            state_reason=issue.state_reason,
            assignees=[self.user_json(a) for a in issue.assignees],
            assignee=self.user_json(issue.assignees[0]) if issue.assignees else None,
            comments=sum(c.issue_number == issue.number for c in self.comments.values()),
            url=url,
            comments_url=f"{url}/comments",
            events_url=f"{url}/events",
            labels_url=f"{url}/labels{{/name}}",
            repository_url=self.repo_url,
            html_url=f"{HTML}/{self.repo.full_name}/issues/{issue.number}",
            author_association="NONE" if issue.user[1] == "Bot" else "MEMBER",
            **extra,
        )

    def pull_json(self, issue: Issue) -> dict:
        pull = issue.pull or {}
        url = f"{self.repo_url}/pulls/{issue.number}"
        html = f"{HTML}/{self.repo.full_name}/pull/{issue.number}"
        head_owner = pull["head_owner"]

        def side(owner: str, ref: str, sha: str, fork: bool) -> dict:
            return {
                "label": f"{owner}:{ref}",
                "ref": ref,
                "sha": sha,
                "user": self.user_json(owner),
                "repo": self.repo_json("repository", owner=owner, fork=fork),
            }

        issue_url = f"{self.repo_url}/issues/{issue.number}"
        return self.api.build(
            "pull-request",
            **self._issue_fields(issue),
            node_id=f"PR_{issue.id}",
            url=url,
            html_url=html,
            issue_url=issue_url,
            comments_url=f"{issue_url}/comments",
            commits_url=f"{url}/commits",
            review_comments_url=f"{url}/comments",
            diff_url=f"{html}.diff",
            patch_url=f"{html}.patch",
            statuses_url=f"{self.repo_url}/statuses/{pull['head_sha']}",
            head=side(head_owner, pull["head_ref"], pull["head_sha"], pull["fork"]),
            base=side(self.repo.owner, pull["base_ref"], pull["base_sha"], False),
            merged_at=issue.merged_at,
            merge_commit_sha=issue.merge_commit_sha,
            author_association="CONTRIBUTOR",
            merged=issue.merged_at is not None,
            mergeable=True,
            mergeable_state="clean",
            draft=False,
        )

    def pull_simple_json(self, issue: Issue) -> dict:
        """The pull request as list endpoints show it (``pull-request-simple``)."""
        full = self.pull_json(issue)
        wanted = self.api.at("#/components/schemas/pull-request-simple")["properties"]
        simple = {key: value for key, value in full.items() if key in wanted}
        # This schema's labels have a non-nullable description (the full pull request's may be null).
        simple["labels"] = [{**lb, "description": lb["description"] or ""} for lb in full["labels"]]
        return simple

    def event_json(self, event: IssueEvent) -> dict:
        url = f"{self.repo_url}/issues/events/{event.id}"
        label = self.label_json(event.label)
        return {
            "id": event.id,
            "node_id": f"LE_{event.id}",
            "url": url,
            "actor": self.user_json(event.actor),
            "event": event.event,
            "commit_id": None,
            "commit_url": None,
            "created_at": event.created_at,
            "performed_via_github_app": None,
            "label": {"name": label["name"], "color": label["color"]},
        }

    def comment_json(self, comment: Comment) -> dict:
        return self.api.build(
            "issue-comment",
            id=comment.id,
            node_id=f"IC_{comment.id}",
            body=comment.body,
            url=f"{self.repo_url}/issues/comments/{comment.id}",
            html_url=f"{HTML}/{self.repo.full_name}/issues/{comment.issue_number}#issuecomment-{comment.id}",
            issue_url=f"{self.repo_url}/issues/{comment.issue_number}",
            user=self.user_json(*comment.user),
            created_at=comment.created_at,
            updated_at=comment.updated_at,
            author_association="NONE" if comment.user[1] == "Bot" else "MEMBER",
        )

    def check_run_json(self, run: CheckRun) -> dict:
        url = f"{self.repo_url}/check-runs/{run.id}"
        app = self.api.build(
            "nullable-integration",
            id=15368,
            slug="github-actions",
            node_id="MDM6QXBwMTUzNjg=",
            name="GitHub Actions",
            owner=self.user_json("github", "Organization"),
            external_url="https://help.github.com/en/actions",
            html_url=f"{HTML}/apps/github-actions",
            created_at="2018-07-30T09:30:17Z",
            updated_at="2019-12-10T19:04:12Z",
            permissions={"checks": "write"},
            events=[],
        )
        return self.api.build(
            "check-run",
            id=run.id,
            node_id=f"CR_{run.id}",
            name=run.name,
            head_sha=run.head_sha,
            status=run.status,
            conclusion=run.conclusion,
            started_at=run.started_at,
            completed_at=run.completed_at,
            external_id=run.external_id or "",
            url=url,
            html_url=f"{HTML}/{self.repo.full_name}/runs/{run.id}",
            details_url=run.details_url,
            output={
                "title": run.title,
                "summary": run.summary,
                "text": run.text,
                "annotations_count": len(run.annotations),
                "annotations_url": f"{url}/annotations",
            },
            check_suite={"id": 7000 + run.id},
            app=app,
            pull_requests=[],
        )

    def artifact_json(self, art: Artifact) -> dict:
        run = self.runs[art.run_id]
        url = f"{self.repo_url}/actions/artifacts/{art.id}"
        return self.api.build(
            "artifact",
            id=art.id,
            node_id=f"A_{art.id}",
            name=art.name,
            size_in_bytes=len(art.data),
            url=url,
            archive_download_url=f"{url}/zip",
            expired=art.expired,
            created_at=art.created_at,
            updated_at=art.created_at,
            expires_at=art.expires_at,
            workflow_run={
                "id": run.id,
                "repository_id": self.repo.id,
                "head_repository_id": self.repo.id,
                "head_branch": run.head_branch,
                "head_sha": run.head_sha,
            },
        )

    def run_json(self, run: WorkflowRun) -> dict:
        url = f"{self.repo_url}/actions/runs/{run.id}"
        repo = self.repo_json("minimal-repository")
        return self.api.build(
            "workflow-run",
            id=run.id,
            node_id=f"WFR_{run.id}",
            name="CI",
            head_branch=run.head_branch,
            head_sha=run.head_sha,
            run_number=run.id % 1000,
            run_attempt=1,
            display_title="CI",
            event=run.event,
            status=run.status,
            conclusion=run.conclusion,
            workflow_id=161335,
            path=".github/workflows/ci.yml",
            url=url,
            html_url=f"{HTML}/{self.repo.full_name}/actions/runs/{run.id}",
            created_at=run.created_at,
            updated_at=run.created_at,
            run_started_at=run.created_at,
            jobs_url=f"{url}/jobs",
            logs_url=f"{url}/logs",
            artifacts_url=f"{url}/artifacts",
            check_suite_url=f"{self.repo_url}/check-suites/1",
            cancel_url=f"{url}/cancel",
            rerun_url=f"{url}/rerun",
            workflow_url=f"{self.repo_url}/actions/workflows/161335",
            repository=repo,
            head_repository=repo,
            pull_requests=[],
        )

    # -- seeding helpers -----------------------------------------------------------------------
    def add_pull(
        self,
        number: int,
        head_ref: str,
        base_ref: str,
        head_sha: str,
        base_sha: str,
        fork: bool = False,
        title: str = "A change",
        user_login: str = "contributor",
    ) -> Issue:
        with self.lock:
            now = self.now()
            issue = Issue(
                number=number,
                id=self.next_id(),
                title=title,
                body=None,
                user=(user_login, "User"),
                created_at=now,
                updated_at=now,
                pull={
                    "head_ref": head_ref,
                    "base_ref": base_ref,
                    "head_sha": head_sha,
                    "base_sha": base_sha,
                    "fork": fork,
                    "head_owner": user_login if fork else self.repo.owner,
                },
            )
            self.issues[number] = issue
            return issue

    def label(self, number: int, name: str, actor: str, *, add: bool = True) -> IssueEvent:
        """Add (or remove) a label as ``actor`` would in the web UI: the labels and an event."""
        with self.lock:
            issue = self.issues[number]
            if add and name not in issue.labels:
                issue.labels.append(name)
            elif not add and name in issue.labels:
                issue.labels.remove(name)
            issue.updated_at = self.now()
            event = IssueEvent(
                id=self.next_id(),
                issue_number=number,
                event="labeled" if add else "unlabeled",
                actor=actor,
                label=name,
                created_at=issue.updated_at,
            )
            self.events.append(event)
            return event

    def merge_pull(self, number: int, merge_sha: str) -> Issue:
        """Merge the pull request: closed, merged, its merge commit known to commits/{sha}/pulls."""
        with self.lock:
            issue = self.issues[number]
            issue.state = "closed"
            issue.closed_at = issue.merged_at = issue.updated_at = self.now()
            issue.merge_commit_sha = merge_sha
            return issue

    def pulls_of_commit(self, sha: str) -> list[Issue]:
        """Pull requests merged as ``sha``, or open ones whose head it is (as GitHub answers)."""
        with self.lock:
            pulls = [i for i in self.issues.values() if i.pull is not None]
            return [
                i
                for i in pulls
                if i.merge_commit_sha == sha or (i.state == "open" and i.pull["head_sha"] == sha)
            ]

    def add_issue(
        self,
        title: str,
        body: str | None = None,
        labels: list[str] | None = None,
        user_login: str = "someone",
        user_type: str = "User",
        state: str = "open",
    ) -> Issue:
        with self.lock:
            now = self.now()
            issue = Issue(
                number=self.next_number(),
                id=self.next_id(),
                title=title,
                body=body,
                user=(user_login, user_type),
                created_at=now,
                updated_at=now,
                state=state,
                closed_at=now if state == "closed" else None,
                labels=list(labels or []),
            )
            self.issues[issue.number] = issue
            return issue

    def add_comment(
        self, issue_number: int, body: str, user_login: str = "someone", user_type: str = "User"
    ) -> Comment:
        with self.lock:
            now = self.now()
            comment = Comment(
                id=self.next_id(),
                issue_number=issue_number,
                body=body,
                user=(user_login, user_type),
                created_at=now,
                updated_at=now,
            )
            self.comments[comment.id] = comment
            return comment

    def add_artifact(
        self,
        name: str,
        zip_bytes: bytes,
        head_branch: str,
        run_id: int,
        *,
        expired: bool = False,
        created_at: datetime | None = None,
        conclusion: str = "success",
        head_sha: str = "0" * 40,
        event: str = "push",
        without_length: bool = False,
    ) -> Artifact:
        with self.lock:
            created = created_at or datetime.now(UTC)
            if run_id not in self.runs:
                self.runs[run_id] = WorkflowRun(
                    id=run_id,
                    head_branch=head_branch,
                    head_sha=head_sha,
                    event=event,
                    status="completed",
                    conclusion=conclusion,
                    created_at=iso(created),
                )
            aid = self.next_id()
            art = Artifact(
                id=aid,
                name=name,
                data=zip_bytes,
                run_id=run_id,
                expired=expired,
                created_at=iso(created),
                expires_at=iso(created + timedelta(days=90)),
                blob_key=f"{aid}-{abs(hash(name)) % 10**8}",
                without_length=without_length,
            )
            self.artifacts[aid] = art
            return art
