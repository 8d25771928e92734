"""`index.scope`: which stored `scope` values a chat sees."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from kenomem.index.scope import GLOBAL, of_session, owner, sees, spellings, visible

chats = st.from_regex(r"[A-Za-z0-9_.:@é-]{1,20}", fullmatch=True).filter(
    lambda c: owner(c) == c and c != GLOBAL
)


def test_the_rule() -> None:
    assert visible(()) == ()  # a person's recall and list: every scope
    assert visible(("chat-A",)) == ("chat-A", "session:chat-A", GLOBAL)
    assert visible(("global",)) == (GLOBAL,)
    assert of_session(None) == (GLOBAL,)  # an agent without a session: the global ones
    assert of_session("chat-A") == visible(("chat-A",))
    assert owner("session:chat-A") == "chat-A" and owner("") == GLOBAL
    assert owner("session:") == "session:"
    assert spellings("chat-A") == ("chat-A", "session:chat-A")
    assert spellings("session:chat-A") == spellings("chat-A")
    assert spellings("global") == (GLOBAL,)


@given(a=chats, b=chats)
def test_a_chat_sees_itself_and_global_never_another(a: str, b: str) -> None:
    allowed = of_session(a)
    assert sees(a, allowed) and sees("session:" + a, allowed) and sees(GLOBAL, allowed)
    assert sees(b, allowed) == (a == b)
    assert sees("session:" + b, allowed) == (a == b)
    assert not sees(a, of_session(None))
    assert visible(allowed) == allowed  # widening twice changes nothing
    for value in allowed:
        assert sees(value, allowed)
