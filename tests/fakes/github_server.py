"""A stateful fake of the GitHub REST API endpoints promptcanary-action uses.

A real HTTP/1.1 server on 127.0.0.1 (stdlib ThreadingHTTPServer). Every request (path parameters,
query, JSON body) and every response (status and body) is checked against the subset of GitHub's
published OpenAPI description in github_openapi.json (see scripts/extract_github_openapi.py):
an invalid request gets GitHub's answer (422 "Validation Failed" with an `errors` list, 400 for
unparsable JSON, 404 for a malformed path parameter) and lands in `validation_errors`; an invalid
response is a bug in this fake and lands in `response_errors` (the `github_server` fixture fails
the test when that list is not empty).

    with FakeGitHubServer() as gh:
        gh.add_pull(7, "feature", "main", "a" * 40, "b" * 40)
        client = github.Github(auth=github.Auth.Token("ghs_x"), base_url=gh.url, retry=None,
                               seconds_between_requests=None, seconds_between_writes=None)

Artifact downloads redirect (302) to a blob URL on `http://localhost:<port>/_blobs/...`: the same
server under another host name, like GitHub's storage host, served without authentication.
"""

from __future__ import annotations

import io
import json
import re
import threading
import time
import urllib.parse
import zipfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, TypeVar

from tests.fakes.github_state import (
    BOT,
    DOCS,
    Artifact,
    CheckRun,
    Comment,
    GitHubState,
    Issue,
    IssueEvent,
    OpenAPISubset,
)

MAX_COMMENT = 65536
MAX_OUTPUT = 65535
MAX_ANNOTATIONS = 50
SECONDARY_MESSAGE = (
    "You have exceeded a secondary rate limit. Please wait a few minutes before you try again. "
    "If you reach out to GitHub Support for help, please include the request ID."
)


def make_zip(files: dict[str, str]) -> bytes:
    """A zip archive of ``files`` (name → text), as an artifact's download holds it."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for name, text in files.items():
            zf.writestr(name, text)
    return buf.getvalue()


T = TypeVar("T")

_SPEC: OpenAPISubset | None = None  # parsed once per process; validators are cached inside


def _spec() -> OpenAPISubset:
    global _SPEC
    if _SPEC is None:
        _SPEC = OpenAPISubset()
    return _SPEC


class ApiError(Exception):
    """Raised by a handler: answered with GitHub's error body shape."""

    def __init__(
        self, status: int, message: str, errors: list[dict] | None = None, doc: str = DOCS
    ) -> None:
        super().__init__(message)
        self.status, self.message, self.errors, self.doc = status, message, errors, doc

    def body(self) -> dict:
        body: dict[str, Any] = {
            "message": self.message,
            "documentation_url": self.doc,
            "status": str(self.status),
        }
        if self.errors is not None:
            body["errors"] = self.errors
        return body


def validation_failed(
    resource: str, field_name: str, code: str, message: str | None = None
) -> ApiError:
    error = {"resource": resource, "field": field_name, "code": code}
    if message:
        error["message"] = message
    return ApiError(422, "Validation Failed", [error])


@dataclass
class Reply:
    status: int
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class Ctx:
    method: str
    path: str
    params: dict[str, Any]
    query: dict[str, Any]
    raw_query: dict[str, str]
    body: Any
    token: str


@dataclass
class RecordedRequest:
    method: str
    path: str
    query: dict[str, str]
    json: Any
    headers: dict[str, str]


@dataclass
class Fault:
    method: str
    pattern: re.Pattern
    status: int
    times: int | None
    message: str | None
    retry_after: int | None
    secondary_rate_limit: bool
    primary_rate_limit: bool
    after_write: bool = False
    hits: int = 0


Handler = Callable[["FakeGitHubServer", Ctx], Reply]
ROUTES: list[tuple[str, str, Handler]] = []
RESOURCES = {
    "issues/create-comment": "IssueComment",
    "issues/update-comment": "IssueComment",
    "issues/create": "Issue",
    "issues/update": "Issue",
    "checks/create": "CheckRun",
    "checks/update": "CheckRun",
}


def route(method: str, template: str) -> Callable[[Handler], Handler]:
    def register(fn: Handler) -> Handler:
        ROUTES.append((method, template, fn))
        return fn

    return register


def _compile(template: str) -> re.Pattern:
    return re.compile("^" + re.sub(r"\\\{(\w+)\\\}", r"(?P<\1>[^/]+)", re.escape(template)) + "$")


class FakeGitHubServer:
    """The fake GitHub API. Start with start()/stop() or as a context manager; `url` is the API base."""

    def __init__(
        self,
        owner: str = "octo-org",
        repo: str = "octo-repo",
        default_branch: str = "main",
        rate_limit: int = 5000,
    ) -> None:
        self.api = _spec()
        self.state = GitHubState(self.api, owner, repo, default_branch)
        self.requests: list[RecordedRequest] = []
        self.blob_requests: list[RecordedRequest] = []
        self.validation_errors: list[dict] = []
        self.response_errors: list[str] = []
        self.user_tokens: dict[
            str, str
        ] = {}  # token -> login; every other token is an installation token
        self.response_hook: Callable[[str, Reply], None] | None = (
            None  # test-only: may corrupt a reply
        )
        self.rate_limit = rate_limit
        self.rate_used = 0
        self.rate_reset = int(time.time()) + 3600
        self._faults: list[Fault] = []
        self._routes = [(m, t, _compile(t), fn) for m, t, fn in ROUTES]
        self._routes.sort(key=lambda r: -r[1].count("/") * 10 + r[1].count("{"))
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle -----------------------------------------------------------------------------
    def start(self) -> FakeGitHubServer:
        server = self

        class _Handler(_RequestHandler):
            fake = server

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self._httpd.daemon_threads = True
        port = self._httpd.server_address[1]
        self.state.base_url = f"http://127.0.0.1:{port}"
        self.state.blob_base = f"http://localhost:{port}/_blobs"
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, args=(0.05,), name="fake-github", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def __enter__(self) -> FakeGitHubServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def url(self) -> str:
        return self.state.base_url

    # -- seeding and inspection ----------------------------------------------------------------
    def add_pull(self, *args: Any, **kw: Any) -> Issue:
        """:meth:`GitHubState.add_pull`: number, head ref, base ref, head sha, base sha, fork."""
        return self.state.add_pull(*args, **kw)

    def add_issue(self, title: str, **kw: Any) -> Issue:
        return self.state.add_issue(title, **kw)

    def add_comment(
        self, issue_number: int, body: str, user_login: str = "someone", user_type: str = "User"
    ) -> Comment:
        return self.state.add_comment(issue_number, body, user_login, user_type)

    def add_artifact(
        self, name: str, zip_bytes: bytes, head_branch: str, run_id: int, **kw: Any
    ) -> Artifact:
        return self.state.add_artifact(name, zip_bytes, head_branch, run_id, **kw)

    def label(self, number: int, name: str, actor: str, *, add: bool = True) -> IssueEvent:
        return self.state.label(number, name, actor, add=add)

    def merge_pull(self, number: int, merge_sha: str) -> Issue:
        return self.state.merge_pull(number, merge_sha)

    def add_user_token(self, token: str, login: str) -> None:
        """Make `token` a user's token (GET /user works, comments are by `login`)."""
        self.user_tokens[token] = login

    def comments(self, issue_number: int) -> list[Comment]:
        with self.state.lock:
            return [c for c in self.state.comments.values() if c.issue_number == issue_number]

    @property
    def check_runs(self) -> list[CheckRun]:
        with self.state.lock:
            return list(self.state.check_runs.values())

    @property
    def issues(self) -> list[Issue]:
        with self.state.lock:
            return [i for i in self.state.issues.values() if i.pull is None]

    def requests_to(self, method: str, path_regex: str) -> list[RecordedRequest]:
        return [r for r in self.requests if r.method == method and re.search(path_regex, r.path)]

    # -- fault injection -----------------------------------------------------------------------
    def fail(
        self,
        method: str,
        path_regex: str,
        status: int,
        *,
        times: int | None = None,
        message: str | None = None,
        retry_after: int | None = None,
        secondary_rate_limit: bool = False,
        primary_rate_limit: bool = False,
        after_write: bool = False,
    ) -> Fault:
        """Answer matching requests with `status` the first `times` times (None: always).

        after_write: the request is carried out first (a POST creates its object) and only the
        answer is the failure, as when GitHub times out or a proxy fails after the write.

        secondary_rate_limit: GitHub's 403 with retry-after and "You have exceeded a secondary rate limit".
        primary_rate_limit: 403 (or the given 429) with X-RateLimit-Remaining: 0 and a reset time.
        """
        fault = Fault(
            method.upper(),
            re.compile(path_regex),
            status,
            times,
            message,
            retry_after,
            secondary_rate_limit,
            primary_rate_limit,
            after_write,
        )
        self._faults.append(fault)
        return fault

    def clear_faults(self) -> None:
        self._faults.clear()

    def _fault_reply(self, method: str, path: str, *, after_write: bool = False) -> Reply | None:
        for fault in self._faults:
            if fault.after_write != after_write:
                continue
            if fault.method not in (method, "*") or not fault.pattern.search(path):
                continue
            if fault.times is not None and fault.hits >= fault.times:
                continue
            fault.hits += 1
            headers: dict[str, str] = {}
            message = fault.message or "Injected failure"
            if fault.secondary_rate_limit:
                message = fault.message or SECONDARY_MESSAGE
                headers["retry-after"] = str(
                    fault.retry_after if fault.retry_after is not None else 60
                )
            elif fault.primary_rate_limit:
                message = fault.message or "API rate limit exceeded for installation ID 1234567."
                headers["x-ratelimit-remaining"] = "0"
            if fault.retry_after is not None:
                headers["retry-after"] = str(fault.retry_after)
            body = ApiError(
                fault.status, message, doc=f"{DOCS}/overview/rate-limits-for-the-rest-api"
            ).body()
            return Reply(fault.status, body, headers)
        return None

    # -- request pipeline ----------------------------------------------------------------------
    def handle(self, method: str, raw_path: str, headers: dict[str, str], raw_body: bytes) -> Reply:
        parts = urllib.parse.urlsplit(raw_path)
        path = parts.path
        raw_query = dict(urllib.parse.parse_qsl(parts.query, keep_blank_values=True))
        body_json: Any = None
        if raw_body:
            try:
                body_json = json.loads(raw_body)
            except ValueError:
                body_json = raw_body.decode("utf-8", "replace")
        record = RecordedRequest(method, path, raw_query, body_json, headers)
        if path.startswith("/_blobs/"):
            self.blob_requests.append(record)
            return self._blob(method, path)
        self.requests.append(record)
        token = _token(headers.get("authorization", ""))
        if token is None:
            return Reply(401, ApiError(401, "Requires authentication").body())
        found = self._match(method, path)
        if found is None:
            return Reply(404, ApiError(404, "Not Found").body())
        template, match, fn = found
        with self.state.lock:
            if path != "/rate_limit":
                self.rate_used += 1
            fault = self._fault_reply(method, path)
        if fault is not None:
            return fault
        try:
            ctx = self._parse(
                method, template, path, match.groupdict(), raw_query, raw_body, body_json, token
            )
        except ApiError as err:  # already recorded in validation_errors
            ctx, reply = None, Reply(err.status, err.body())
        if ctx is not None:
            try:
                with self.state.lock:
                    reply = fn(self, ctx)
            except ApiError as err:
                if err.status == 422:  # a GitHub rule the schema cannot express
                    self._record_rejection(method, path, err)
                reply = Reply(err.status, err.body())
        if self.response_hook is not None:
            self.response_hook(f"{method} {template}", reply)
        self._check_response(method, template, reply)
        if reply.status < 400:
            with self.state.lock:
                failed_after = self._fault_reply(method, path, after_write=True)
            if failed_after is not None:
                return failed_after
        return reply

    def _match(self, method: str, path: str) -> tuple[str, re.Match, Handler] | None:
        for m, template, pattern, fn in self._routes:
            match = pattern.match(path)
            if match and m == method:
                return template, match, fn
        return None

    def _parse(
        self,
        method: str,
        template: str,
        path: str,
        params: dict,
        raw_query: dict,
        raw_body: bytes,
        body_json: Any,
        token: str,
    ) -> Ctx:
        op = self.api.operation(method, template)
        resource = RESOURCES.get(op["operationId"], "Request")
        query: dict[str, Any] = {}
        for param, pointer in self.api.parameters(method, template):
            name, where = param["name"], param["in"]
            source = params if where == "path" else raw_query if where == "query" else {}
            if name not in source:
                if param.get("required") and where != "path":
                    self._reject(method, path, validation_failed(resource, name, "missing_field"))
                continue
            value = _coerce(source[name], self.api.resolve(param.get("schema", {})))
            if self.api.errors(pointer, value, write=True):
                if where == "path":
                    self._reject(method, path, ApiError(404, "Not Found"))
                self._reject(
                    method, path, validation_failed(resource, name, "invalid", f"{name} is invalid")
                )
            (params if where == "path" else query)[name] = value
        body_pointer, required = self.api.request_body(method, template)
        if body_pointer is not None:
            if raw_body and isinstance(body_json, str):
                self._reject(method, path, ApiError(400, "Problems parsing JSON"))
            if body_json is None and required:
                body_json = {}
            errors = (
                self.api.errors(body_pointer, body_json, write=True)
                if body_json is not None
                else []
            )
            if errors:
                self._reject(
                    method,
                    path,
                    ApiError(
                        422, "Validation Failed", [_gh_error(resource, e) for e in errors[:20]]
                    ),
                )
        return Ctx(method, path, params, query, raw_query, body_json, token)

    def _reject(self, method: str, path: str, err: ApiError) -> None:
        self._record_rejection(method, path, err)
        raise err

    def _record_rejection(self, method: str, path: str, err: ApiError) -> None:
        self.validation_errors.append(
            {**err.body(), "method": method, "path": path, "status": err.status}
        )

    def _check_response(self, method: str, template: str, reply: Reply) -> None:
        declared, pointer = self.api.response_schema(method, template, reply.status)
        where = f"{method} {template} -> {reply.status}"
        if not declared:
            if reply.status < 400:
                self.response_errors.append(
                    f"{where}: status not declared in the OpenAPI description"
                )
                return
            pointer = (
                "#/components/schemas/validation-error"
                if reply.status == 422
                else "#/components/schemas/basic-error"
            )
        if pointer is None:
            if reply.body is not None:
                self.response_errors.append(f"{where}: body sent where the description has none")
            return
        for err in self.api.errors(pointer, reply.body, write=False)[:10]:
            location = "/".join(str(p) for p in err.absolute_path)
            self.response_errors.append(f"{where}: at '{location}': {err.message[:300]}")

    def _blob(self, method: str, path: str) -> Reply:
        key = path.rsplit("/", 1)[-1].removesuffix(".zip")
        with self.state.lock:
            art = next((a for a in self.state.artifacts.values() if a.blob_key == key), None)
        if method != "GET" or art is None:
            return Reply(404, b"BlobNotFound", {"Content-Type": "application/xml"})
        headers = {"Content-Type": "application/zip"}
        if art.without_length:
            headers[_NO_LENGTH] = "1"
        return Reply(200, art.data, headers)

    def rate_headers(self) -> dict[str, str]:
        return {
            "X-RateLimit-Limit": str(self.rate_limit),
            "X-RateLimit-Remaining": str(max(self.rate_limit - self.rate_used, 0)),
            "X-RateLimit-Reset": str(self.rate_reset),
            "X-RateLimit-Used": str(self.rate_used),
            "X-RateLimit-Resource": "core",
        }

    def paginate(
        self,
        ctx: Ctx,
        items: list,
        render: Callable[[Any], Any],
        wrap: str | None = None,
        **extra: Any,
    ) -> Reply:
        per_page = min(int(ctx.query.get("per_page") or 30), 100)
        page = max(int(ctx.query.get("page") or 1), 1)
        last = max((len(items) + per_page - 1) // per_page, 1)
        chunk = [render(i) for i in items[(page - 1) * per_page : page * per_page]]

        def link(n: int, rel: str) -> str:
            query = urllib.parse.urlencode({**ctx.raw_query, "page": n})
            return f'<{self.url}{ctx.path}?{query}>; rel="{rel}"'

        links = []
        if page < last:
            links += [link(page + 1, "next"), link(last, "last")]
        if page > 1:
            links += [link(1, "first"), link(min(page - 1, last), "prev")]
        headers = {"Link": ", ".join(links)} if links else {}
        body = {**extra, wrap: chunk} if wrap else chunk
        return Reply(200, body, headers)


def _token(header: str) -> str | None:
    scheme, _, value = header.strip().partition(" ")
    if scheme.lower() in ("token", "bearer") and value.strip():
        return value.strip()
    return None


def _coerce(value: str, schema: dict) -> Any:
    kind = schema.get("type")
    if kind == "integer" and re.fullmatch(r"-?\d+", value):
        return int(value)
    if kind == "boolean" and value in ("true", "false"):
        return value == "true"
    return value


def _gh_error(resource: str, err: Any) -> dict:
    """A jsonschema error as one entry of GitHub's `errors` list."""
    path = ".".join(str(p) for p in err.absolute_path)
    if err.validator == "required":
        missing = [n for n in err.validator_value if n not in (err.instance or {})]
        name = ".".join(filter(None, [path, missing[0] if missing else ""]))
        return {
            "resource": resource,
            "field": name,
            "code": "missing_field",
            "message": f"{name} wasn't supplied",
        }
    if err.validator == "maxItems":
        message = (
            f"{path} has more than {err.validator_value} items (maximum is {err.validator_value})"
        )
    elif err.validator == "maxLength":
        message = f"{path} is too long (maximum is {err.validator_value} characters)"
    else:
        message = f"{path or 'body'}: {err.message[:200]}"
    return {"resource": resource, "field": path, "code": "invalid", "message": message}


_NO_LENGTH = "X-Fake-Without-Length"  # internal: never sent


class _RequestHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    fake: FakeGitHubServer

    def _serve(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        headers = {k.lower(): v for k, v in self.headers.items()}
        try:
            reply = self.fake.handle(self.command, self.path, headers, raw)
        except Exception as exc:  # a bug in the fake: answer 500 and make the test fail
            self.fake.response_errors.append(
                f"{self.command} {self.path}: handler crashed: {exc!r}"
            )
            reply = Reply(500, {"message": "fake server crashed", "documentation_url": DOCS})
        payload = (
            reply.body
            if isinstance(reply.body, bytes)
            else (b"" if reply.body is None else json.dumps(reply.body).encode())
        )
        self.send_response(reply.status)
        if not self.path.startswith("/_blobs/"):
            for key, value in self.fake.rate_headers().items():
                if key.lower() not in {h.lower() for h in reply.headers}:
                    self.send_header(key, value)
        if payload and not isinstance(reply.body, bytes):
            self.send_header("Content-Type", "application/json; charset=utf-8")
        for key, value in reply.headers.items():
            if key != _NO_LENGTH:
                self.send_header(key, value)
        if _NO_LENGTH in reply.headers:  # the body ends when the connection closes
            self.send_header("Connection", "close")
            self.close_connection = True
        else:
            self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(payload)

    do_GET = do_POST = do_PATCH = do_PUT = do_DELETE = do_HEAD = _serve

    def log_message(self, format: str, *args: Any) -> None:  # keep test output quiet
        pass


# ---------------------------------------------------------------------------------------------
# Route handlers: one small function per operation. They run under state.lock.
# ---------------------------------------------------------------------------------------------
def _repo(server: FakeGitHubServer, ctx: Ctx) -> None:
    repo = server.state.repo
    if (ctx.params["owner"].lower(), ctx.params["repo"].lower()) != (
        repo.owner.lower(),
        repo.name.lower(),
    ):
        raise ApiError(404, "Not Found")


def _found(server: FakeGitHubServer, ctx: Ctx, table: Mapping[int, T], param: str) -> T:
    """``table[<the path parameter param>]`` of the repository; 404, as GitHub answers, when the
    repository or the item is unknown."""
    _repo(server, ctx)
    item = table.get(ctx.params[param])
    if item is None:
        raise ApiError(404, "Not Found")
    return item


def _issue(server: FakeGitHubServer, ctx: Ctx) -> Issue:
    return _found(server, ctx, server.state.issues, "issue_number")


def _author(server: FakeGitHubServer, ctx: Ctx) -> tuple[str, str]:
    login = server.user_tokens.get(ctx.token)
    return (login, "User") if login else BOT


def _check_body_length(resource: str, body: str | None) -> None:
    if body is not None and len(body) > MAX_COMMENT:
        raise validation_failed(
            resource, "body", "custom", f"body is too long (maximum is {MAX_COMMENT} characters)"
        )


@route("GET", "/repos/{owner}/{repo}")
def get_repo(server: FakeGitHubServer, ctx: Ctx) -> Reply:
    _repo(server, ctx)
    return Reply(200, server.state.repo_json())


@route("GET", "/repos/{owner}/{repo}/pulls/{pull_number}")
def get_pull(server: FakeGitHubServer, ctx: Ctx) -> Reply:
    issue = _found(server, ctx, server.state.issues, "pull_number")
    if issue.pull is None:
        raise ApiError(404, "Not Found")
    return Reply(200, server.state.pull_json(issue))


@route("GET", "/repos/{owner}/{repo}/issues/{issue_number}")
def get_issue(server: FakeGitHubServer, ctx: Ctx) -> Reply:
    return Reply(200, server.state.issue_json(_issue(server, ctx)))


@route("PATCH", "/repos/{owner}/{repo}/issues/{issue_number}")
def update_issue(server: FakeGitHubServer, ctx: Ctx) -> Reply:
    issue, body = _issue(server, ctx), ctx.body
    _check_body_length("Issue", body.get("body"))
    if "title" in body and body["title"] is not None:
        issue.title = str(body["title"])
    if "body" in body:
        issue.body = body["body"]
    if body.get("state") in ("open", "closed") and body["state"] != issue.state:
        issue.state = body["state"]
        issue.closed_at = server.state.now() if issue.state == "closed" else None
        issue.state_reason = body.get("state_reason") or (
            "completed" if issue.state == "closed" else "reopened"
        )
    if "labels" in body:
        issue.labels = [
            lb if isinstance(lb, str) else lb.get("name", "") for lb in body["labels"] or []
        ]
    if "assignees" in body:
        issue.assignees = list(body["assignees"] or [])
    issue.updated_at = server.state.now()
    return Reply(200, server.state.issue_json(issue))


@route("GET", "/repos/{owner}/{repo}/issues")
def list_issues(server: FakeGitHubServer, ctx: Ctx) -> Reply:
    _repo(server, ctx)
    q = ctx.query
    state, wanted = (
        q.get("state", "open"),
        {n.strip() for n in q.get("labels", "").split(",") if n.strip()},
    )
    items = [
        i
        for i in server.state.issues.values()
        if (state == "all" or i.state == state)
        and wanted <= set(i.labels)
        and ("creator" not in q or i.user[0] == q["creator"])
    ]
    items.sort(
        key=lambda i: (i.updated_at if q.get("sort") == "updated" else i.created_at, i.number),
        reverse=q.get("direction", "desc") == "desc",
    )
    return server.paginate(ctx, items, server.state.issue_json)


@route("POST", "/repos/{owner}/{repo}/issues")
def create_issue(server: FakeGitHubServer, ctx: Ctx) -> Reply:
    _repo(server, ctx)
    body = ctx.body
    _check_body_length("Issue", body.get("body"))
    labels = [lb if isinstance(lb, str) else lb.get("name", "") for lb in body.get("labels") or []]
    login, kind = _author(server, ctx)
    issue = server.state.add_issue(
        str(body["title"]), body=body.get("body"), labels=labels, user_login=login, user_type=kind
    )
    issue.assignees = list(
        body.get("assignees") or ([body["assignee"]] if body.get("assignee") else [])
    )
    data = server.state.issue_json(issue)
    return Reply(201, data, {"Location": data["url"]})


@route("GET", "/repos/{owner}/{repo}/issues/{issue_number}/comments")
def list_comments(server: FakeGitHubServer, ctx: Ctx) -> Reply:
    issue = _issue(server, ctx)
    since = ctx.query.get("since")
    items = [c for c in server.comments(issue.number) if not since or c.updated_at >= since]
    return server.paginate(ctx, items, server.state.comment_json)


@route("GET", "/repos/{owner}/{repo}/issues/{issue_number}/events")
def list_issue_events(server: FakeGitHubServer, ctx: Ctx) -> Reply:
    issue = _issue(server, ctx)
    items = [e for e in server.state.events if e.issue_number == issue.number]
    return server.paginate(ctx, items, server.state.event_json)


@route("GET", "/repos/{owner}/{repo}/commits/{commit_sha}/pulls")
def list_commit_pulls(server: FakeGitHubServer, ctx: Ctx) -> Reply:
    _repo(server, ctx)
    items = server.state.pulls_of_commit(ctx.params["commit_sha"])
    return server.paginate(ctx, items, server.state.pull_simple_json)


@route("POST", "/repos/{owner}/{repo}/issues/{issue_number}/comments")
def create_comment(server: FakeGitHubServer, ctx: Ctx) -> Reply:
    issue = _issue(server, ctx)
    _check_body_length("IssueComment", ctx.body["body"])
    login, kind = _author(server, ctx)
    comment = server.state.add_comment(issue.number, ctx.body["body"], login, kind)
    data = server.state.comment_json(comment)
    return Reply(201, data, {"Location": data["url"]})


@route("PATCH", "/repos/{owner}/{repo}/issues/comments/{comment_id}")
def update_comment(server: FakeGitHubServer, ctx: Ctx) -> Reply:
    comment = _found(server, ctx, server.state.comments, "comment_id")
    _check_body_length("IssueComment", ctx.body["body"])
    comment.body, comment.updated_at = ctx.body["body"], server.state.now()
    return Reply(200, server.state.comment_json(comment))


def _apply_check_run(server: FakeGitHubServer, run: CheckRun, body: dict) -> None:
    output = body.get("output") or {}
    annotations = output.get("annotations") or []
    if len(annotations) > MAX_ANNOTATIONS:  # also in the schema (maxItems); kept explicit
        raise validation_failed(
            "CheckRun",
            "output.annotations",
            "custom",
            f"Only {MAX_ANNOTATIONS} annotations are allowed per request",
        )
    for key in ("summary", "text"):
        if len(output.get(key) or "") > MAX_OUTPUT:
            raise validation_failed(
                "CheckRun",
                f"output.{key}",
                "custom",
                f"{key} is too long (maximum is {MAX_OUTPUT} characters)",
            )
    status = "completed" if body.get("conclusion") else body.get("status", run.status)
    if status == "completed" and not (body.get("conclusion") or run.conclusion):
        raise validation_failed(
            "CheckRun",
            "conclusion",
            "missing_field",
            "conclusion is required when status is completed",
        )
    run.status = status
    run.conclusion = body.get("conclusion", run.conclusion)
    if status == "completed":
        run.completed_at = body.get("completed_at") or run.completed_at or server.state.now()
    for key in ("details_url", "external_id", "name"):
        if key in body:
            setattr(run, key, body[key])
    if output:
        run.title = output.get("title", run.title)
        run.summary = output.get("summary", run.summary)
        run.text = output.get("text", run.text)
        run.annotations.extend(annotations)  # GitHub appends the annotations of every update
    run.updates += 1


@route("POST", "/repos/{owner}/{repo}/check-runs")
def create_check_run(server: FakeGitHubServer, ctx: Ctx) -> Reply:
    _repo(server, ctx)
    state = server.state
    run = CheckRun(
        id=state.next_id(),
        name=ctx.body["name"],
        head_sha=ctx.body["head_sha"],
        status="queued",
        conclusion=None,
        started_at=ctx.body.get("started_at") or state.now(),
        completed_at=None,
    )
    _apply_check_run(server, run, ctx.body)
    run.updates = 0
    state.check_runs[run.id] = run
    return Reply(201, state.check_run_json(run))


@route("PATCH", "/repos/{owner}/{repo}/check-runs/{check_run_id}")
def update_check_run(server: FakeGitHubServer, ctx: Ctx) -> Reply:
    run = get_check_run_obj(server, ctx)
    _apply_check_run(server, run, ctx.body)
    return Reply(200, server.state.check_run_json(run))


def get_check_run_obj(server: FakeGitHubServer, ctx: Ctx) -> CheckRun:
    return _found(server, ctx, server.state.check_runs, "check_run_id")


@route("GET", "/repos/{owner}/{repo}/check-runs/{check_run_id}")
def get_check_run(server: FakeGitHubServer, ctx: Ctx) -> Reply:
    return Reply(200, server.state.check_run_json(get_check_run_obj(server, ctx)))


@route("GET", "/repos/{owner}/{repo}/commits/{ref}/check-runs")
def list_check_runs_for_ref(server: FakeGitHubServer, ctx: Ctx) -> Reply:
    # ref is a SHA here (the action always passes one); newest first, as GitHub lists them
    _repo(server, ctx)
    name = ctx.query.get("check_name")
    items = [
        r
        for r in server.state.check_runs.values()
        if r.head_sha == ctx.params["ref"] and (name is None or r.name == name)
    ]
    items.sort(key=lambda r: r.id, reverse=True)
    return server.paginate(
        ctx, items, server.state.check_run_json, wrap="check_runs", total_count=len(items)
    )


@route("GET", "/repos/{owner}/{repo}/actions/artifacts")
def list_artifacts(server: FakeGitHubServer, ctx: Ctx) -> Reply:
    _repo(server, ctx)
    name = ctx.query.get("name")
    items = [a for a in server.state.artifacts.values() if name is None or a.name == name]
    items.sort(
        key=lambda a: (a.created_at, a.id), reverse=True
    )  # newest first, as GitHub lists them
    return server.paginate(
        ctx, items, server.state.artifact_json, wrap="artifacts", total_count=len(items)
    )


@route("GET", "/repos/{owner}/{repo}/actions/artifacts/{artifact_id}/{archive_format}")
def download_artifact(server: FakeGitHubServer, ctx: Ctx) -> Reply:
    art = _found(server, ctx, server.state.artifacts, "artifact_id")
    if ctx.params["archive_format"] != "zip":
        raise ApiError(404, "Not Found")
    if art.expired:
        raise ApiError(410, "Artifact has expired")
    return Reply(302, None, {"Location": f"{server.state.blob_base}/{art.blob_key}.zip?sig=fake"})


@route("GET", "/repos/{owner}/{repo}/actions/runs/{run_id}")
def get_workflow_run(server: FakeGitHubServer, ctx: Ctx) -> Reply:
    run = _found(server, ctx, server.state.runs, "run_id")
    return Reply(200, server.state.run_json(run))


@route("GET", "/rate_limit")
def get_rate_limit(server: FakeGitHubServer, ctx: Ctx) -> Reply:
    h = server.rate_headers()
    core = {
        "limit": server.rate_limit,
        "remaining": int(h["X-RateLimit-Remaining"]),
        "reset": server.rate_reset,
        "used": server.rate_used,
    }
    search = {"limit": 30, "remaining": 30, "reset": server.rate_reset, "used": 0}
    return Reply(200, {"resources": {"core": core, "search": search}, "rate": core})


@route("GET", "/user")
def get_user(server: FakeGitHubServer, ctx: Ctx) -> Reply:
    login = server.user_tokens.get(ctx.token)
    if login is None:  # installation (workflow) tokens cannot ask who they are
        raise ApiError(
            403,
            "Resource not accessible by integration",
            doc="https://docs.github.com/rest/users/users#get-the-authenticated-user",
        )
    user = server.state.user_json(login)
    return Reply(
        200,
        server.api.build(
            "public-user",
            **user,
            user_view_type="public",
            name=login,
            public_repos=1,
            followers=0,
            following=0,
        ),
    )
