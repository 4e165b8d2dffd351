"""Settings.from_environ: every input's cleaning, defaults, spellings and the secret token."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from promptcanary_action.settings import GitHubEnv, InputError, Settings

# The valid values of every enumerated input, in the order action.yml lists them (the error
# message lists them in this order too).
CHOICES = {
    ("baseline", "baseline"): ["branch", "artifact", "path", "none"],
    ("update-baseline", "update_baseline"): ["auto", "always", "never"],
    ("fail-on", "fail_on"): [
        "regression",
        "inconclusive",
        "failure",
        "never",
        "low",
        "medium",
        "high",
        "critical",
    ],
    ("comment", "comment"): ["update", "new", "off"],
    ("mode", "mode"): ["run", "merge", "post-comment"],
}

# (input, field, a valid value, its parsed value, an invalid value, the rule the message states)
NUMBERS = [
    ("samples", "samples", "1", 1, "0", "must be auto or an integer ≥ 1 and ≤ 1000"),
    ("samples", "samples", "12", 12, "1.5", "must be auto or an integer ≥ 1 and ≤ 1000"),
    ("samples", "samples", "Auto", "auto", "-3", "must be auto or an integer ≥ 1 and ≤ 1000"),
    ("samples", "samples", "1000", 1000, "1000000", "must be auto or an integer ≥ 1 and ≤ 1000"),
    ("min-samples", "min_samples", "1", 1, "0", "must be an integer ≥ 1 and ≤ 1000"),
    ("max-samples", "max_samples", "1000", 1000, "10000", "must be an integer ≥ 1 and ≤ 1000"),
    ("baseline-pool", "baseline_pool", "1", 1, "0", "must be an integer ≥ 1 and ≤ 100"),
    ("baseline-samples", "baseline_samples", "30", 30, "0", "must be an integer ≥ 1 and ≤ 1000"),
    ("concurrency", "concurrency", "1", 1, "0", "must be an integer ≥ 1"),
    ("concurrency", "concurrency", "32", 32, "many", "must be an integer ≥ 1"),
    ("max-retries", "max_retries", "0", 0, "-1", "must be an integer ≥ 0"),
    ("max-judge-requests", "max_judge_requests", "1", 1, "0", "must be an integer ≥ 1"),
    ("max-tokens", "max_tokens", "1", 1, "0", "must be an integer ≥ 1 and ≤ 1000000"),
    (
        "max-tokens",
        "max_tokens",
        "1000000",
        1_000_000,
        "99999999999999999999999",
        "must be an integer ≥ 1 and ≤ 1000000",
    ),
    ("seed", "seed", "-7", -7, "0x1", "must be an integer"),
    ("baseline-max-age-days", "baseline_max_age_days", "0", 0, "-1", "must be an integer ≥ 0"),
    ("alpha", "alpha", "0.01", 0.01, "0", "must be a number > 0 and < 1"),
    ("alpha", "alpha", "0.99", 0.99, "1", "must be a number > 0 and < 1"),
    ("timeout", "timeout", "0.5", 0.5, "0", "must be a number of seconds > 0"),
    ("timeout", "timeout", "600", 600.0, "inf", "must be a number of seconds > 0"),
    ("timeout", "timeout", "1", 1.0, "nan", "must be a number of seconds > 0"),
    ("max-error-rate", "max_error_rate", "0", 0.0, "-0.1", "must be a number ≥ 0 and ≤ 1"),
    ("max-error-rate", "max_error_rate", "1", 1.0, "1.01", "must be a number ≥ 0 and ≤ 1"),
    ("regression-threshold", "regression_threshold", "0", 0.0, "2", "must be a number ≥ 0 and ≤ 1"),
    (
        "regression-threshold",
        "regression_threshold",
        "0.2",
        0.2,
        "nan",
        "must be a number ≥ 0 and ≤ 1",
    ),
    (
        "improvement-threshold",
        "improvement_threshold",
        "1",
        1.0,
        "-1",
        "must be a number ≥ 0 and ≤ 1",
    ),
    ("temperature", "temperature", "0", 0.0, "-0.5", "must be a number ≥ 0 and ≤ 2"),
    ("temperature", "temperature", "1.3", 1.3, "warm", "must be a number ≥ 0 and ≤ 2"),
    ("temperature", "temperature", "2", 2.0, "2.5", "must be a number ≥ 0 and ≤ 2"),
]

BOOLS = [("check-run", "check_run"), ("issue-on-drift", "issue_on_drift")]


def env_for(**inputs: str) -> dict[str, str]:
    """``{"fail_on": "x"}`` → ``{"INPUT_FAIL-ON": "x"}``, the runner's spelling."""
    return {"INPUT_" + name.replace("_", "-").upper(): value for name, value in inputs.items()}


def settings_with(name: str, value: str) -> Settings:
    return Settings.from_environ({f"INPUT_{name.upper()}": value})


def choice_cases() -> list[tuple[str, str, str]]:
    return [(name, attr, value) for (name, attr), values in CHOICES.items() for value in values]


@pytest.mark.parametrize(("name", "attr", "value"), choice_cases())
def test_every_valid_choice_is_accepted(name: str, attr: str, value: str) -> None:
    assert getattr(settings_with(name, value), attr) == value


@pytest.mark.parametrize(("name", "attr", "value"), choice_cases())
def test_choices_ignore_case_and_surrounding_space(name: str, attr: str, value: str) -> None:
    assert getattr(settings_with(name, f"  {value.upper()}\n"), attr) == value


@pytest.mark.parametrize(("name", "attr"), list(CHOICES))
def test_an_invalid_choice_names_the_input_and_every_valid_value(name: str, attr: str) -> None:
    valid = ", ".join(CHOICES[(name, attr)])
    with pytest.raises(InputError) as caught:
        settings_with(name, "sometimes")
    assert str(caught.value) == f"input '{name}': 'sometimes' is not one of {valid}"


def test_the_documented_fail_on_message() -> None:
    with pytest.raises(InputError) as caught:
        Settings.from_environ({"INPUT_FAIL-ON": "sometimes"})
    assert str(caught.value) == (
        "input 'fail-on': 'sometimes' is not one of"
        " regression, inconclusive, failure, never, low, medium, high, critical"
    )


def test_min_samples_above_max_samples_names_both_inputs() -> None:
    with pytest.raises(InputError) as caught:
        Settings.from_environ({"INPUT_MIN-SAMPLES": "30", "INPUT_MAX-SAMPLES": "20"})
    assert str(caught.value) == (
        "input 'min-samples': 30 is above input 'max-samples' (20); "
        "samples: auto needs min-samples ≤ max-samples"
    )


def test_input_error_is_a_value_error() -> None:
    with pytest.raises(ValueError):
        settings_with("samples", "0")


@pytest.mark.parametrize(("name", "attr", "good", "parsed", "bad", "rule"), NUMBERS)
def test_numbers_accept_values_within_bounds(
    name: str, attr: str, good: str, parsed: Any, bad: str, rule: str
) -> None:
    value = getattr(settings_with(name, good), attr)
    assert value == pytest.approx(parsed)
    assert type(value) is type(parsed)


@pytest.mark.parametrize(("name", "attr", "good", "parsed", "bad", "rule"), NUMBERS)
def test_numbers_outside_bounds_name_the_input_and_the_range(
    name: str, attr: str, good: str, parsed: Any, bad: str, rule: str
) -> None:
    with pytest.raises(InputError) as caught:
        settings_with(name, bad)
    assert str(caught.value) == f"input '{name}': '{bad}' {rule}"


def test_the_documented_samples_message() -> None:
    with pytest.raises(InputError) as caught:
        Settings.from_environ({"INPUT_SAMPLES": "0"})
    assert str(caught.value) == "input 'samples': '0' must be auto or an integer ≥ 1 and ≤ 1000"


@pytest.mark.parametrize(("name", "attr"), BOOLS)
@pytest.mark.parametrize(
    ("raw", "expected"), [("true", True), ("TRUE", True), ("False", False), ("false", False)]
)
def test_booleans_are_true_or_false_in_any_case(
    name: str, attr: str, raw: str, expected: bool
) -> None:
    assert getattr(settings_with(name, raw), attr) is expected


@pytest.mark.parametrize(("name", "attr"), BOOLS)
@pytest.mark.parametrize("raw", ["yes", "1", "on"])
def test_booleans_reject_other_spellings(name: str, attr: str, raw: str) -> None:
    with pytest.raises(InputError) as caught:
        settings_with(name, raw)
    assert str(caught.value) == f"input '{name}': '{raw}' is not one of true, false"


def test_config_is_one_path_or_glob_a_line() -> None:
    settings = settings_with("config", "suites/a.yaml\n\n  suites/b, c.yaml  \r\nmore/*.yaml\n")
    assert settings.config == ["suites/a.yaml", "suites/b, c.yaml", "more/*.yaml"]


def test_probe_modules_are_one_a_line() -> None:
    assert settings_with("probe-modules", "probes/mine.py\nmy_pkg.probes\n").probe_modules == [
        "probes/mine.py",
        "my_pkg.probes",
    ]


def test_models_are_separated_by_commas_or_newlines() -> None:
    settings = settings_with("models", "gpt-4o-mini, anthropic/claude-3-5-haiku\nollama/llama3,,\n")
    assert settings.models == ["gpt-4o-mini", "anthropic/claude-3-5-haiku", "ollama/llama3"]


@pytest.mark.parametrize("value", ["nightly", "team.a_b-1"])
def test_comment_id_accepts_simple_names(value: str) -> None:
    assert settings_with("comment-id", value).comment_id == value


@pytest.mark.parametrize("value", ["a-->b", "two words", "x" * 65])
def test_comment_id_rejects_what_could_break_the_hidden_marker(value: str) -> None:
    with pytest.raises(InputError, match=r"^input 'comment-id': '.*' must be 1 to 64 letters"):
        settings_with("comment-id", value)


@pytest.mark.parametrize("value", ["promptcanary-baselines", "data/canary", "v1.2"])
def test_baseline_branch_accepts_branch_names(value: str) -> None:
    assert settings_with("baseline-branch", value).baseline_branch == value


@pytest.mark.parametrize(
    "value", ["-x", "a..b", "with space", "a:b", "end/", "x.lock", "a//b", ".hidden", "a@{1}", "q?"]
)
def test_baseline_branch_rejects_names_git_refuses(value: str) -> None:
    with pytest.raises(
        InputError, match=r"^input 'baseline-branch': .* is not a valid git branch name"
    ):
        settings_with("baseline-branch", value)


def test_shard_is_read_as_i_of_n() -> None:
    shard = settings_with("shard", " 3/4 ").shard
    assert shard is not None and (shard.index, shard.total) == (3, 4)
    assert Settings().shard is None


@pytest.mark.parametrize(
    ("value", "says"), [("5/4", "does not exist"), ("0/2", "does not exist"), ("two", "i/n")]
)
def test_an_invalid_shard_names_the_input_and_the_form(value: str, says: str) -> None:
    with pytest.raises(InputError, match=r"^input 'shard': ") as caught:
        settings_with("shard", value)
    assert says in str(caught.value)


def test_long_invalid_values_are_shortened_in_the_message() -> None:
    with pytest.raises(InputError) as caught:
        settings_with("fail-on", "x" * 500)
    assert len(str(caught.value)) < 200


def test_text_inputs_are_stripped() -> None:
    settings = Settings.from_environ(
        env_for(
            check_name="  Canary (nightly) ", report_dir=" out/report \n", working_directory="sub"
        )
    )
    assert (settings.check_name, settings.report_dir, settings.working_directory) == (
        "Canary (nightly)",
        "out/report",
        "sub",
    )


# ------------------------------------------------------------------------------------------------
# spellings, defaults, unknown inputs


def test_underscore_spelling_is_accepted() -> None:
    settings = Settings.from_environ(
        {"INPUT_FAIL_ON": "never", "INPUT_MAX_ERROR_RATE": "0.5", "INPUT_GITHUB_TOKEN": "tok"}
    )
    assert (settings.fail_on, settings.max_error_rate, settings.github_token) == (
        "never",
        0.5,
        "tok",
    )


def test_the_runner_spelling_wins_over_the_underscore_one() -> None:
    settings = Settings.from_environ({"INPUT_FAIL-ON": "high", "INPUT_FAIL_ON": "never"})
    assert settings.fail_on == "high"


def test_an_empty_runner_spelling_falls_back_to_the_underscore_one() -> None:
    assert Settings.from_environ({"INPUT_FAIL-ON": "", "INPUT_FAIL_ON": "low"}).fail_on == "low"


def test_empty_and_blank_values_take_the_default() -> None:
    # approve-label is the one input whose explicit empty value means something (no approvals).
    names = [name for name in Settings.input_fields() if name != "approve-label"]
    blank = {f"INPUT_{name.upper()}": " \n" for name in names}
    assert Settings.from_environ(blank) == Settings.from_environ({}) == Settings()


@pytest.mark.parametrize(
    ("env", "label"),
    [
        ({}, "promptcanary: approve"),
        ({"INPUT_APPROVE-LABEL": "promptcanary: approve"}, "promptcanary: approve"),
        ({"INPUT_APPROVE-LABEL": "drift ok"}, "drift ok"),
        ({"INPUT_APPROVE-LABEL": ""}, None),
        ({"INPUT_APPROVE_LABEL": " "}, None),
    ],
)
def test_approve_label_set_empty_turns_approvals_off(
    env: dict[str, str], label: str | None
) -> None:
    assert Settings.from_environ(env).approve_label == label


def test_approve_label_must_be_a_label_name() -> None:
    with pytest.raises(InputError) as err:
        Settings.from_environ({"INPUT_APPROVE-LABEL": "x" * 51})
    assert "approve-label" in str(err.value) and "50 characters" in str(err.value)


def test_unknown_inputs_are_ignored() -> None:
    settings = Settings.from_environ({"INPUT_NO-SUCH-INPUT": "x", "INPUT_SAMPLES": "3"})
    assert settings.samples == 3


def test_list_defaults_are_not_shared_between_instances() -> None:
    first, second = Settings(), Settings()
    first.config.append("other.yaml")
    assert second.config == ["canary.yaml"]


# ------------------------------------------------------------------------------------------------
# the token


TOKEN = "ghs_SuperSecretToken1234567890abcdefghij"


def test_the_token_is_read_but_never_shown() -> None:
    settings = Settings.from_environ({"INPUT_GITHUB-TOKEN": TOKEN})
    assert settings.github_token == TOKEN
    assert TOKEN not in repr(settings)
    assert TOKEN not in str(settings)
    assert "github_token" not in repr(settings)


def test_the_token_is_not_in_error_messages() -> None:
    with pytest.raises(InputError) as caught:
        Settings.from_environ({"INPUT_GITHUB-TOKEN": TOKEN, "INPUT_SAMPLES": "none"})
    assert TOKEN not in str(caught.value)
    assert TOKEN not in repr(caught.value)


# ------------------------------------------------------------------------------------------------
# the runner's environment


RUNNER_ENV = {
    "GITHUB_EVENT_NAME": "pull_request",
    "GITHUB_EVENT_PATH": "/github/workflow/event.json",
    "GITHUB_REPOSITORY": "octo-org/octo-repo",
    "GITHUB_SHA": "a" * 40,
    "GITHUB_REF": "refs/pull/7/merge",
    "GITHUB_HEAD_REF": "feature",
    "GITHUB_BASE_REF": "main",
    "GITHUB_API_URL": "https://ghe.example.com/api/v3/",
    "GITHUB_SERVER_URL": "https://ghe.example.com",
    "GITHUB_WORKSPACE": "/github/workspace",
    "GITHUB_OUTPUT": "/github/file_commands/set_output_1",
    "GITHUB_STEP_SUMMARY": "/github/file_commands/step_summary_1",
    "GITHUB_RUN_ID": "123456",
    "GITHUB_RUN_ATTEMPT": "2",
    "GITHUB_JOB": "canary",
    "GITHUB_WORKFLOW": "CI",
    "GITHUB_ACTOR": "octocat",
}


def test_github_env_is_read_from_the_runner_variables() -> None:
    github = Settings.from_environ(RUNNER_ENV).github
    assert github == GitHubEnv(
        event_name="pull_request",
        event_path=Path("/github/workflow/event.json"),
        repository="octo-org/octo-repo",
        sha="a" * 40,
        ref="refs/pull/7/merge",
        head_ref="feature",
        base_ref="main",
        api_url="https://ghe.example.com/api/v3",
        server_url="https://ghe.example.com",
        workspace=Path("/github/workspace"),
        run_id="123456",
        run_attempt="2",
    )


def test_github_env_defaults_outside_a_runner() -> None:
    github = GitHubEnv.from_environ({"GITHUB_API_URL": "", "GITHUB_OUTPUT": ""})
    assert github.api_url == "https://api.github.com"
    assert github.server_url == "https://github.com"
    assert github.event_path is None and github.workspace is None
    assert github.run_url is None


def test_run_key_names_the_run_attempt_and_is_none_outside_a_run() -> None:
    assert GitHubEnv.from_environ(RUNNER_ENV).run_key == "123456/2"
    assert GitHubEnv(run_id="99").run_key == "99/1"  # runners before attempts: the first
    assert GitHubEnv().run_key is None


def test_run_url_links_to_the_workflow_run() -> None:
    github = GitHubEnv.from_environ(RUNNER_ENV)
    assert github.run_url == "https://ghe.example.com/octo-org/octo-repo/actions/runs/123456"


@pytest.mark.parametrize(
    ("ref", "branch"),
    [
        ("refs/heads/main", "main"),
        ("refs/heads/feature/x", "feature/x"),
        ("refs/tags/v1.0.0", None),
        ("refs/pull/7/merge", None),
        ("", None),
    ],
)
def test_ref_branch(ref: str, branch: str | None) -> None:
    assert GitHubEnv(ref=ref).ref_branch == branch


# A value each bounded run option refuses (RunOptions' rule), given as the workflow would.
REFUSED_BY_RUN_OPTIONS = {
    "temperature": "2.5",
    "max_tokens": "1000001",
    "samples": "1001",
    "min_samples": "0",
    "max_samples": "1001",
    "baseline_pool": "101",
    "baseline_samples": "1001",
    "concurrency": "0",
    "timeout": "-1",
    "max_retries": "-1",
}


def test_the_run_option_inputs_are_bounded_by_run_options_the_clis_rule() -> None:
    from dataclasses import fields

    from promptcanary.core.run.options import RunOptionError, RunOptions, option_rule

    shared = {f.name for f in fields(RunOptions)} & {f.name for f in fields(Settings)}
    # Every input that is a run option (but the unbounded seed and the shard, parsed apart).
    assert shared - {"seed", "shard"} == set(REFUSED_BY_RUN_OPTIONS)
    inputs = {attr: name for name, attr in Settings.input_fields().items()}
    for attr, bad in REFUSED_BY_RUN_OPTIONS.items():
        with pytest.raises(RunOptionError) as refused:  # the engine's own rule refuses it …
            RunOptions(**{attr: Settings.__dataclass_fields__[attr].metadata["clean"]("x", bad)})
        with pytest.raises(InputError) as caught:  # … and the input says so in its words
            settings_with(inputs[attr], bad)
        assert refused.value.field == attr
        assert str(caught.value) == f"input '{inputs[attr]}': '{bad}' {option_rule(attr)}"
