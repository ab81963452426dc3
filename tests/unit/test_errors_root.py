"""One error root for the API and chain trees, and one `NotSent` (`bot.errors`).

What each `except` clause catches must not change: a provider's `NotSent` is still an
`ApiError` and never a `ChainError`, a node's is still a `NodeUnavailable`; and no
unknown outcome is ever a `NotSent` (it would become retryable).
"""

from __future__ import annotations

import inspect
import pickle
from types import ModuleType

import pytest

import bot.api
import bot.chain
from bot import errors
from bot.api import errors as api_errors
from bot.chain import errors as chain_errors


def classes(module: ModuleType) -> list[type[BaseException]]:
    return [
        obj
        for _, obj in inspect.getmembers(module, inspect.isclass)
        if issubclass(obj, BaseException) and obj.__module__ == module.__name__
    ]


def test_one_not_sent_whichever_name_it_is_imported_by() -> None:
    assert api_errors.NotSent is chain_errors.NotSent is errors.NotSent
    assert bot.api.NotSent is bot.chain.NotSent is errors.NotSent


def test_every_api_and_chain_error_has_the_one_root() -> None:
    for cls in classes(api_errors) + classes(chain_errors):
        assert issubclass(cls, errors.BotError), cls


def test_the_not_sent_classes_stay_in_their_trees() -> None:
    api = api_errors.ApiNotSent("GET /prices: not sent", endpoint="GET /prices")
    node = chain_errors.NodeNotSent("node not reached", endpoint="GET /v1")
    assert isinstance(api, api_errors.ApiError) and isinstance(api, errors.NotSent)
    assert not isinstance(api, chain_errors.ChainError)
    assert isinstance(node, chain_errors.NodeUnavailable) and isinstance(node, errors.NotSent)
    assert not isinstance(node, api_errors.ApiError)
    assert api.endpoint == "GET /prices" and str(api) == "GET /prices: not sent"
    assert node.endpoint == "GET /v1" and str(node) == "GET /v1: node not reached"


def test_only_the_two_tree_classes_mean_not_sent() -> None:
    found = {
        cls
        for cls in classes(api_errors) + classes(chain_errors)
        if issubclass(cls, errors.NotSent)
    }
    assert found == {api_errors.ApiNotSent, chain_errors.NodeNotSent}


@pytest.mark.parametrize("unknown", [api_errors.OutcomeUnknown, chain_errors.SubmitOutcomeUnknown])
def test_an_unknown_outcome_is_never_not_sent(unknown: type[Exception]) -> None:
    assert not issubclass(unknown, errors.NotSent)


def test_not_sent_itself_is_never_raised() -> None:
    with pytest.raises(TypeError, match="ApiNotSent, NodeNotSent"):
        errors.NotSent("nowhere")


def test_except_clauses_keep_their_scope() -> None:
    def caught_by(exc: Exception, *kinds: type[Exception]) -> bool:
        try:
            raise exc
        except kinds:
            return True
        except Exception:
            return False

    api = api_errors.ApiNotSent("x", endpoint="GET /prices")
    node = chain_errors.NodeNotSent("x", endpoint="GET /v1")
    assert caught_by(api, api_errors.ApiError) and not caught_by(api, chain_errors.ChainError)
    assert caught_by(node, chain_errors.ChainError) and not caught_by(node, api_errors.ApiError)
    assert caught_by(api, errors.NotSent) and caught_by(node, errors.NotSent)
    unknown = api_errors.OutcomeUnknown("x")
    assert not caught_by(unknown, errors.NotSent)


def test_not_sent_survives_pickling() -> None:
    copy = pickle.loads(pickle.dumps(api_errors.ApiNotSent("GET /prices: not sent")))
    assert isinstance(copy, api_errors.ApiNotSent) and str(copy) == "GET /prices: not sent"
