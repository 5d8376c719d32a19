"""The textual inliner of the generated kernels (pagesim._kernels.inline): a function with its
closure calls written out computes what it computed with the calls, in plain Python."""

import random
import textwrap

import pytest

from pagesim._kernels.inline import inline_calls

SRC = textwrap.dedent(
    '''
    def outer(xs, log):
        """A loop calling closures in every position the kernels use."""
        total = 0
        n = len(xs)

        def note(v):
            log.append(v)

        def first_at_least(lo, hi, t):
            """Single exit; its locals i and n clash with the caller's."""
            r = -1
            for i in range(lo, hi):
                if xs[i] >= t:
                    r = i
                    break
            return r

        def bump(i, by):
            n = by * 2
            note(i + n)
            hit = first_at_least(0, len(xs), i) >= 0
            if hit:
                xs[i % len(xs)] += n
            else:
                note(-1)
            return hit

        for i in range(n):
            k = first_at_least(i, n, xs[i] + 1)
            if bump(i, k):
                total += 1
            elif bump(k, i):
                total += 2
            else:
                note(k)
                total -= first_at_least(0, i, 3)
            note(bump(i + 1, 2) + total)
            bump(note(i) or i, 1)
            bump(first_at_least(0, n, xs[0]) % n + 1, 1)  # a call statement with a closure call in its arguments
            # an argument left of a closure call that changes what it reads is evaluated first
            bump(xs[1 % n] % n, int(bump(1, 1)))
            note(xs[0] * 100 + bump(0, 1))
            total += max(xs[i], int(bump(i, 3)))
        return total
    '''
)


def run(src, xs):
    ns = {}
    exec(compile(src, "<t>", "exec"), ns)
    log = []
    xs = list(xs)
    return ns["outer"](xs, log), xs, log


@pytest.mark.parametrize("seed", range(20))
def test_inlined_function_computes_the_same(seed):
    rng = random.Random(seed)
    xs = [rng.randrange(-3, 9) for _ in range(rng.randrange(1, 12))]
    out = inline_calls(SRC, ("first_at_least", "bump"), func="outer")
    assert "def first_at_least" not in out and "def bump" not in out and "bump(" not in out
    assert "def note" in out  # not asked for: still a closure, and still called
    assert run(out, xs) == run(SRC, xs)


def test_uncalled_closures_are_removed():
    src = textwrap.dedent(
        """
        def f(a):
            def g(x):
                return x + h(x)
            def h(x):
                return 2 * x
            def used(x):
                return x - 1
            return used(a)
        """
    )
    out = inline_calls(src, ("used",), func="f")
    assert "def g" not in out and "def h" not in out and "def used" not in out
    ns = {}
    exec(out, ns)
    assert ns["f"](5) == 4


@pytest.mark.parametrize(
    "body, why",
    [
        ("def g(x):\n        if x:\n            return 1\n        return 2\n    return g(a)", "a return before its end"),
        ("def g(x):\n        return x\n    return a and g(a)", "inside and/or"),
        ("def g(x):\n        return x\n    while g(a):\n        a -= 1\n    return a", "loop header"),
    ],
)
def test_refuses_what_it_cannot_write_out(body, why):
    src = "def f(a):\n    " + body + "\n"
    with pytest.raises(RuntimeError, match=why):
        inline_calls(src, ("g",), func="f")


def test_a_calls_function_is_not_bound_apart():
    """Arguments left of a closure call are bound first (Python evaluates them first); the called
    function itself (an attribute such as ``np.int64``) stays in place for numba to type."""
    src = textwrap.dedent(
        """
        def outer(np, xs):
            def g(i):
                xs[0] += 1
                return i

            return np.add(xs[0], g(1))
        """
    )
    out = inline_calls(src, ("g",), func="outer")
    assert "np.add(" in out and "= np.add" not in out
    assert "_arg" in out  # xs[0] is bound before g runs

    class NP:
        add = staticmethod(lambda a, b: a + b)

    ns1, ns2 = {}, {}
    exec(compile(src, "<t>", "exec"), ns1)
    exec(compile(out, "<t>", "exec"), ns2)
    assert ns1["outer"](NP, [5]) == ns2["outer"](NP, [5]) == 6


def test_parse_pauses_the_garbage_collector(monkeypatch):
    """A collection in the middle of ast.parse may run Python callbacks and switch threads while
    CPython 3.11's interpreter-wide syntax-tree counter is in use: the kernels' parse runs with the
    collector paused, and leaves it as it found it."""
    import ast
    import gc

    from pagesim._kernels import inline

    seen = []
    real = ast.parse
    monkeypatch.setattr(ast, "parse", lambda src: (seen.append(gc.isenabled()), real(src))[1])
    assert gc.isenabled()
    assert isinstance(inline.inline_calls("def translate_chunk():\n    return 1\n", ()), str)
    assert seen == [False] and gc.isenabled()
    gc.disable()
    try:
        inline.parse("x = 1\n")
        assert not gc.isenabled()
    finally:
        gc.enable()
