"""Balances of every account and token, in integer base units, conserved to the unit.

Accounts are plain strings: a wallet's canonical address, `escrow:<order id>`, `market`
(the outside world behind the liquidity pools, which may go negative), and fee sinks
(`fees:platform`, `fees:integrator`, `fees:keeper`, `gas`). Tokens are canonical token
keys (coin type or FA address text, see `bot.aptos.tokens.token_key`).

Invariant: for every token, the sum over all accounts equals what was minted.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from typing import Final

__all__ = ["MARKET", "InsufficientFunds", "Ledger", "escrow_account"]

MARKET: Final = "market"


class InsufficientFunds(Exception):
    """An account does not hold enough of a token for a transfer."""

    def __init__(self, account: str, token: str, needed: int, held: int) -> None:
        super().__init__(f"{account} holds {held} of {token}, needs {needed} (base units)")
        self.account = account
        self.token = token
        self.needed = needed
        self.held = held


def escrow_account(order_id: str) -> str:
    """The account holding an order's escrowed funds."""
    return f"escrow:{order_id}"


class Ledger:
    """Integer balances per (account, token); only `MARKET` may go negative."""

    def __init__(self) -> None:
        self._balances: dict[str, dict[str, int]] = defaultdict(dict)
        self._minted: dict[str, int] = defaultdict(int)
        self._undo: list[tuple[str, str, int]] | None = None

    def balance(self, account: str, token: str) -> int:
        """Base units of `token` held by `account` (0 when never touched)."""
        return self._balances.get(account, {}).get(token, 0)

    def balances(self, account: str) -> dict[str, int]:
        """Every non-zero balance of one account."""
        return {t: v for t, v in self._balances.get(account, {}).items() if v}

    def mint(self, account: str, token: str, amount: int) -> None:
        """Create `amount` of `token` in `account` (the paper faucet); not in a savepoint."""
        _check_amount(amount)
        if self._undo is not None:
            raise RuntimeError("minting inside a savepoint could not be rolled back")
        self._add(account, token, amount)
        self._minted[token] += amount

    def transfer(self, token: str, source: str, target: str, amount: int) -> None:
        """Move `amount` base units; raises `InsufficientFunds` (nothing moved) if short."""
        _check_amount(amount)
        if amount == 0 or source == target:
            return
        balances = self._balances
        held = balances[source].get(token, 0) if source in balances else 0
        if source != MARKET and held < amount:
            raise InsufficientFunds(source, token, amount, held)
        # `_add` twice, inlined: this is the hot path of every trade.
        balances[source][token] = held - amount
        book = balances[target]
        book[token] = book.get(token, 0) + amount
        if self._undo is not None:
            self._undo.append((source, token, -amount))
            self._undo.append((target, token, amount))

    def transfers(self, moves: Iterable[tuple[str, str, str, int]]) -> None:
        """Several `transfer(token, source, target, amount)` in order, all or none.

        The same moves, checks and savepoint records as calling `transfer` for each; if
        one raises (`InsufficientFunds`, a bad amount), the moves before it are undone.
        """
        balances = self._balances
        undo = self._undo
        done: list[tuple[str, str, str, int]] = []
        try:
            for move in moves:
                token, source, target, amount = move
                if type(amount) is not int or amount < 0:
                    _check_amount(amount)
                if amount == 0 or source == target:
                    continue
                held = balances[source].get(token, 0) if source in balances else 0
                if source != MARKET and held < amount:
                    raise InsufficientFunds(source, token, amount, held)
                balances[source][token] = held - amount
                book = balances[target]
                book[token] = book.get(token, 0) + amount
                if undo is not None:
                    undo.append((source, token, -amount))
                    undo.append((target, token, amount))
                done.append(move)
        except Exception:
            for token, source, target, amount in reversed(done):
                balances[source][token] += amount
                balances[target][token] -= amount
                if undo is not None:
                    del undo[-2:]
            raise

    def _add(self, account: str, token: str, delta: int) -> None:
        book = self._balances[account]
        book[token] = book.get(token, 0) + delta
        if self._undo is not None:
            self._undo.append((account, token, delta))

    # --- savepoints: a transaction's effects, undone on abort or after a simulation ------

    @property
    def in_savepoint(self) -> bool:
        """Whether a savepoint is open (`begin` without `rollback` or `release` yet)."""
        return self._undo is not None

    def begin(self) -> None:
        """Start recording changes so they can be reported or rolled back (not nested)."""
        if self._undo is not None:
            raise RuntimeError("a savepoint is already open")
        self._undo = []

    def changes(self) -> dict[tuple[str, str], int]:
        """Net change per (account, token) since `begin`, zero entries dropped."""
        net: dict[tuple[str, str], int] = defaultdict(int)
        for account, token, delta in self._undo or []:
            net[(account, token)] += delta
        return {key: value for key, value in net.items() if value}

    def rollback(self) -> None:
        """Undo every change since `begin` and close the savepoint."""
        undo, self._undo = self._undo or [], None
        for account, token, delta in reversed(undo):
            book = self._balances[account]
            book[token] = book.get(token, 0) - delta

    def release(self) -> None:
        """Keep the changes since `begin` and close the savepoint."""
        self._undo = None

    def total(self, token: str) -> int:
        """The sum of `token` over all accounts (equals `minted(token)`)."""
        return sum(book.get(token, 0) for book in self._balances.values())

    def minted(self, token: str) -> int:
        """All of `token` ever minted."""
        return self._minted.get(token, 0)

    def tokens(self) -> set[str]:
        """Every token any account ever held."""
        return {t for book in self._balances.values() for t in book} | set(self._minted)

    def check_conservation(self) -> None:
        """Raise `AssertionError` naming the token if any token is not conserved."""
        for token in self.tokens():
            if self.total(token) != self.minted(token):
                raise AssertionError(
                    f"{token}: accounts hold {self.total(token)}, minted {self.minted(token)}"
                )

    def dump(self) -> dict[str, dict[str, str]]:
        """Non-zero balances as JSON-safe text (for snapshots)."""
        return {
            account: {t: str(v) for t, v in book.items() if v}
            for account, book in self._balances.items()
            if any(book.values())
        } | {"__minted__": {t: str(v) for t, v in self._minted.items()}}

    @classmethod
    def load(cls, data: dict[str, dict[str, str]]) -> Ledger:
        """Rebuild from `dump()` output."""
        ledger = cls()
        for account, book in data.items():
            target = ledger._minted if account == "__minted__" else ledger._balances[account]
            for token, value in book.items():
                target[token] = int(value)
        return ledger


def _check_amount(amount: int) -> None:
    if type(amount) is int and amount >= 0:  # the common case, checked cheaply
        return
    if isinstance(amount, bool) or not isinstance(amount, int) or amount < 0:
        raise ValueError(f"amount must be a non-negative int of base units, got {amount!r}")
