"""`0006_wallet_scope` on a journal written at `0005` (SQLite and PostgreSQL): every row is
kept, and each gets its wallet from its own evidence."""

from __future__ import annotations

from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import text

from bot.engine.pauses import paused_strategies
from bot.journal import Journal, migrate
from bot.journal.db import make_engine
from bot.journal.models import journal_metadata

from .conftest import T0, WALLET

OTHER = "0x" + "cd" * 32
AT = "2026-01-01T00:00:00.000000+00:00"
TABLES = (
    "intents",
    "intent_transitions",
    "orders",
    "order_transitions",
    "fills",
    "transactions",
    "swap_fills",
    "price_ticks",
    "strategy_state",
    "commands",
)


def _at_0005(url: str, statements: list[tuple[str, dict[str, object]]]) -> dict[str, int]:
    assert migrate.upgrade(url, "0005_swap_fills")[1] == "0005_swap_fills"
    engine = make_engine(url)
    try:
        with engine.begin() as conn:
            for sql, values in statements:
                conn.execute(text(sql), values)
        with engine.connect() as conn:
            return {t: conn.execute(text(f"SELECT COUNT(*) FROM {t}")).scalar_one() for t in TABLES}
    finally:
        engine.dispose()


def _intent(strategy: str, wallet: str, key: str) -> tuple[str, dict[str, object]]:
    return (
        "INSERT INTO intents (strategy, wallet, kind, idempotency_key, action_json, created_at,"
        " state, updated_at) VALUES (:s, :w, 'swap', :k, '{}', :at, 'planned', :at)",
        {"s": strategy, "w": wallet, "k": key, "at": AT},
    )


def _order(order_id: str, wallet: str, strategy: str | None) -> tuple[str, dict[str, object]]:
    return (
        "INSERT INTO orders (kind, order_id, strategy, wallet, from_token, to_token,"
        " amount_total, status, created_at, updated_at, last_seen_at) VALUES ('limit', :o, :s,"
        " :w, '0x1::aptos_coin::AptosCoin', '0xa', '1.5', 'active', :at, :at, :at)",
        {"o": order_id, "s": strategy, "w": wallet, "at": AT},
    )


def _state(strategy: str, key: str, value: str = "1") -> tuple[str, dict[str, object]]:
    return (
        "INSERT INTO strategy_state (strategy, key, value_json, updated_at)"
        " VALUES (:s, :k, :v, :at)",
        {"s": strategy, "k": key, "v": value, "at": AT},
    )


def _command(payload: str, state: str = "queued") -> tuple[str, dict[str, object]]:
    return (
        "INSERT INTO commands (created_at, kind, payload_json, state, updated_at)"
        " VALUES (:at, 'pause', :p, :st, :at)",
        {"at": AT, "p": payload, "st": state},
    )


def _rows(url: str, sql: str) -> list[tuple[object, ...]]:
    engine = make_engine(url)
    try:
        with engine.connect() as conn:
            return [tuple(row) for row in conn.execute(text(sql))]
    finally:
        engine.dispose()


def test_a_journal_of_two_wallets_is_scoped_by_each_rows_evidence(url: str) -> None:
    before = _at_0005(
        url,
        [
            _intent("dca_a", WALLET, "k1"),
            _intent("dca_b", OTHER, "k1"),
            _order("L-1", OTHER, "ladder_b"),
            _order("L-2", WALLET, None),
            _state("dca_a", "last"),
            _state("ladder_b", "rung"),
            _state("@daemon", "paused:dca_b", '{"since": null}'),
            _state("nobody", "x"),  # no evidence, two wallets: not named
            _command('{"strategy": "dca_a"}'),
            _command('{"kind": "limit", "order_id": "L-1"}', state="done"),
            _command("{}"),
        ],
    )
    assert migrate.upgrade(url) == ("0005_swap_fills", migrate.head_revision())
    with Journal.open(url, readonly=True) as everything, everything.engine.connect() as conn:
        after = {t: conn.execute(text(f"SELECT COUNT(*) FROM {t}")).scalar_one() for t in TABLES}
    assert after == before  # every row kept
    states = _rows(url, "SELECT strategy, key, wallet FROM strategy_state ORDER BY strategy")
    assert states == [
        ("@daemon", "paused:dca_b", OTHER),
        ("dca_a", "last", WALLET),
        ("ladder_b", "rung", OTHER),
        ("nobody", "x", ""),
    ]
    commands = _rows(url, "SELECT payload_json, wallet FROM commands ORDER BY id")
    assert [wallet for _, wallet in commands] == [WALLET, OTHER, ""]
    with Journal.open(url, wallet=OTHER) as b, Journal.open(url, wallet=WALLET) as a:
        assert set(paused_strategies(b)) == {"dca_b"} and paused_strategies(a) == {}
        assert a.get_state("dca_a", "last") == 1 and b.get_state("dca_a", "last") is None
        assert a.take_command(at=T0).payload == {"strategy": "dca_a"}  # type: ignore[union-attr]
        assert b.take_command(at=T0) is None  # its command is done; the unnamed one unclaimed
        # The same (strategy, key) may now be recorded by both wallets.
        assert not b.record_intent("dca_a", OTHER, "swap", "k1", {}, at=T0).existing
        assert a.record_intent("dca_a", WALLET, "swap", "k1", {}, at=T0).existing


def test_a_journal_of_one_wallet_gives_it_every_row(url: str) -> None:
    _at_0005(
        url,
        [
            _intent("dca", WALLET, "k1"),
            _state("@daemon", "paused:dca", '{"since": null}'),
            _state("gone", "x"),
            _command("{}"),
        ],
    )
    migrate.upgrade(url)
    assert {w for (w,) in _rows(url, "SELECT wallet FROM strategy_state")} == {WALLET}
    assert _rows(url, "SELECT wallet FROM commands") == [(WALLET,)]
    with Journal.open(url, wallet=WALLET) as journal:
        assert set(paused_strategies(journal)) == {"dca"}
        assert journal.claim_unnamed() == 0


def test_an_empty_journal_keeps_its_state_unnamed_until_a_daemon_claims_it(url: str) -> None:
    _at_0005(url, [_state("@daemon", "paused:dca", '{"since": null}'), _command("{}")])
    migrate.upgrade(url)
    assert _rows(url, "SELECT wallet FROM strategy_state") == [("",)]
    with Journal.open(url, wallet=WALLET) as journal:
        assert paused_strategies(journal) == {}
        assert journal.claim_unnamed() == 2
        assert set(paused_strategies(journal)) == {"dca"}


def test_the_downgrade_of_a_one_wallet_journal_keeps_its_rows(url: str) -> None:
    _at_0005(url, [_intent("dca", WALLET, "k1"), _state("dca", "x"), _command("{}")])
    migrate.upgrade(url)
    migrate.downgrade(url, "0005_swap_fills")
    assert _rows(url, "SELECT strategy, key FROM strategy_state") == [("dca", "x")]
    assert len(_rows(url, "SELECT id FROM commands")) == 1
    migrate.upgrade(url)
    assert _rows(url, "SELECT wallet FROM strategy_state") == [(WALLET,)]


def test_the_migrated_schema_is_the_models_on_both_engines(url: str) -> None:
    _at_0005(url, [])
    migrate.upgrade(url)
    engine = make_engine(url)
    try:
        with engine.connect() as conn:
            context = MigrationContext.configure(conn, opts={"compare_type": True})
            assert compare_metadata(context, journal_metadata) == []
    finally:
        engine.dispose()


def test_a_strategy_both_wallets_ran_keeps_its_pause_and_state_for_each(url: str) -> None:
    # Before 0006 one row paused `dca` for every wallet and held its progress for both.
    before = _at_0005(
        url,
        [
            _intent("dca", WALLET, "k1"),
            _intent("dca", OTHER, "k2"),
            _state("@daemon", "paused:dca", '{"since": null}'),
            _state("dca", "slices", "3"),
        ],
    )
    migrate.upgrade(url)
    states = _rows(url, "SELECT strategy, key, value_json, wallet FROM strategy_state")
    assert sorted(states) == sorted(
        (strategy, key, value, wallet)
        for strategy, key, value in [
            ("@daemon", "paused:dca", '{"since": null}'),
            ("dca", "slices", "3"),
        ]
        for wallet in (WALLET, OTHER)
    )
    assert before["strategy_state"] == 2
    with Journal.open(url, wallet=OTHER) as b, Journal.open(url, wallet=WALLET) as a:
        a.claim_unnamed()
        b.claim_unnamed()
        assert set(paused_strategies(a)) == {"dca"} and set(paused_strategies(b)) == {"dca"}
        assert a.get_state("dca", "slices") == 3 and b.get_state("dca", "slices") == 3


def test_a_pause_and_a_queued_command_without_evidence_go_to_every_wallet(url: str) -> None:
    # `new-ladder` was paused (and a pause queued for `dca`, which both wallets ran) before
    # any wallet traded it: whichever daemon runs it after 0006 must find it paused.
    _at_0005(
        url,
        [
            _intent("dca", WALLET, "k1"),
            _intent("dca", OTHER, "k2"),
            _state("@daemon", "paused:new-ladder", '{"since": null}'),
            _command('{"strategy": "dca"}'),
            _command('{"strategy": "new-ladder"}'),
            _command('{"strategy": "dca"}', state="done"),
        ],
    )
    migrate.upgrade(url)
    states = _rows(url, "SELECT key, wallet FROM strategy_state ORDER BY wallet")
    assert states == [("paused:new-ladder", WALLET), ("paused:new-ladder", OTHER)]
    commands = _rows(url, "SELECT payload_json, state, wallet FROM commands ORDER BY id")
    assert sorted(commands) == sorted(
        [
            ('{"strategy": "dca"}', "queued", WALLET),
            ('{"strategy": "dca"}', "queued", OTHER),
            ('{"strategy": "new-ladder"}', "queued", WALLET),
            ('{"strategy": "new-ladder"}', "queued", OTHER),
            ('{"strategy": "dca"}', "done", ""),
        ]
    )
    with Journal.open(url, wallet=OTHER) as b, Journal.open(url, wallet=WALLET) as a:
        assert a.claim_unnamed() == 0 and b.claim_unnamed() == 0
        assert set(paused_strategies(a)) == {"new-ladder"} == set(paused_strategies(b))
        for journal in (a, b):
            taken = [journal.take_command(at=T0), journal.take_command(at=T0)]
            assert [c.payload for c in taken if c] == [
                {"strategy": "dca"},
                {"strategy": "new-ladder"},
            ]
