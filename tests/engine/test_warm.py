"""pagesim warm says what each stage compiles, and about how long, before it runs it."""

from pagesim.engine import warm as W


def test_each_stage_is_announced_before_it_runs(tmp_path, monkeypatch):
    monkeypatch.setattr(W._jit_dir(), "CACHE_DIR", tmp_path)
    lines, seen = [], []
    names = list(W._ABOUT)

    def stage(i):
        def run():
            seen.append(list(lines))  # what had been said when the stage started
            return None

        return run

    monkeypatch.setattr(W, "stages", lambda specialised=True: [(n, stage(i)) for i, n in enumerate(names)])
    W.warm(out=lines.append)
    assert "in an empty cache they compile for about" in lines[0]
    for i, name in enumerate(names):
        said = seen[i][-1]
        assert said.startswith(f"pagesim warm: [{i + 1}/{len(names)}] {W._ABOUT[name][0]}"), said
        assert f"about {W._ABOUT[name][1]} s in an empty cache" in said
    again = []
    W.warm(out=again.append)
    assert not any("in an empty cache" in x for x in again)  # the times this machine took are shown
    assert sum("s the last time here" in x for x in again) == len(names)
