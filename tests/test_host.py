"""Agreement with the running Linux kernel: real minor faults (getrusage) equal simulated faults."""
import pytest

from pagesim.host import compare_faults, why_not


@pytest.mark.parametrize("pattern", ["sequential", "random"])
@pytest.mark.parametrize("thp", [False, True], ids=["4K", "THP"])
def test_real_faults_equal_simulated(thp, pattern):
    reason = why_not(thp)
    if reason:
        pytest.skip(reason)
    r = compare_faults("32M", thp=thp, pattern=pattern, touches=2000, seed=5)
    if thp and r.huge_pages_mapped is not None and r.huge_pages_mapped < 16:
        pytest.skip(f"the kernel mapped {r.huge_pages_mapped} of 16 huge pages (no free 2 MiB blocks now): not a THP run")
    assert r.real_faults == r.simulated_faults, str(r)
    if pattern == "sequential":
        assert r.simulated_faults == (16 if thp else 8192)


def test_bad_requests():
    with pytest.raises(ValueError, match="multiple of 2 MiB"):
        compare_faults("3M")
    with pytest.raises(ValueError, match="larger than the 4 GiB"):
        compare_faults("8G")
    with pytest.raises(ValueError, match="pattern='zigzag'"):
        compare_faults("2M", pattern="zigzag")
