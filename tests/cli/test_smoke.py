from tests.conftest import Cli


def test_remember_then_recall(cli: Cli) -> None:
    made = cli("remember", "The production database is PostgreSQL 15")
    assert made.code == 0, made.err
    found = cli("recall", "database", "--json")
    assert found.code == 0, found.err
    assert "PostgreSQL" in found.out
