from .. import verdict_for

HOSTILE = ["rm -rf /", "cat /etc/passwd"]


def test_denies():
    assert verdict_for("rm -rf /") == "deny"
    for cmd in HOSTILE:
        assert verdict_for(cmd) == "deny"
