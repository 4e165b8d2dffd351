"""Links to a line of the suite file at the run's commit."""

from __future__ import annotations

from promptcanary_action.links import suite_line_url

SHA = "0123456789abcdef0123456789abcdef01234567"


def test_link_to_a_line_at_the_commit() -> None:
    url = suite_line_url("https://github.com", "acme/bot", SHA, "canaries/suite.yaml", 12)

    assert url == f"https://github.com/acme/bot/blob/{SHA}/canaries/suite.yaml#L12"


def test_enterprise_server_and_odd_paths() -> None:
    url = suite_line_url("https://ghe.example.com/", "acme/bot", SHA, "my suite#2.yaml", 3)

    assert url == f"https://ghe.example.com/acme/bot/blob/{SHA}/my%20suite%232.yaml#L3"


def test_no_link_without_every_part() -> None:
    assert suite_line_url("https://github.com", "", SHA, "s.yaml", 1) is None
    assert suite_line_url("https://github.com", "a/b", "", "s.yaml", 1) is None
    assert suite_line_url("https://github.com", "a/b", SHA, "s.yaml", None) is None


def test_dataset_rows_are_named_from_the_repository_root() -> None:
    from promptcanary_action.links import dataset_rows

    rows = {"a": ("data/cases.csv", 3), "b": ("./sub/../more.jsonl", 9)}
    assert dataset_rows(".github/canaries/suite.yml", rows) == {
        "a": (".github/canaries/data/cases.csv", 3),
        "b": (".github/canaries/more.jsonl", 9),
    }
    assert dataset_rows("suite.yml", rows)["a"] == ("data/cases.csv", 3)
