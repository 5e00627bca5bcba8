import pytest

from kraftsman.storage import dynamic_voters as dv

D = "JEXY6aqzQY-32P5TStzaFg"


def test_parse_example():
    voters = dv.parse_voters(f"2@example.com:8084:07R5amHmR32VDA6jHkGbTA,0@example.com:8082:{D},"
                             "1@[::1]:8083:MvDxzVmcRsaTz33bUuRU6A")
    assert list(voters) == [0, 1, 2]
    assert voters[1].host == "::1" and voters[1].port == 8083
    assert str(voters[0].directory_id) == D
    assert str(voters[1]) == "1@[::1]:8083:MvDxzVmcRsaTz33bUuRU6A"


@pytest.mark.parametrize("text,message", [
    ("example.com:8082", "No @ found in dynamic voter string."),
    ("@example.com:8082:" + D, "Invalid @ at beginning of dynamic voter string."),
    ("x@example.com:8082:" + D, "Failed to parse node id in dynamic voter string."),
    ("-1@example.com:8082:" + D, "Invalid negative node id -1 in dynamic voter string."),
    ("1@", "No hostname found after node id."),
    ("1@[::1:8082:" + D, "Hostname began with left bracket, but no right bracket was found."),
    ("1@example.com", "No colon following hostname could be found."),
    ("1@[::1]8082:" + D, "Port section must start with a colon."),
    ("1@example.com:8082", "No colon following port could be found."),
    ("1@example.com:80x:" + D, "Failed to parse port in dynamic voter string."),
    ("1@example.com:70000:" + D, "Invalid port 70000 in dynamic voter string."),
    ("1@example.com:8082:nope", "Failed to parse directory ID in dynamic voter string."),
    ("", "No voters given."),
    (",", "No voters given."),
    (f"1@a:1:{D},1@b:2:{D}", "Node id 1 was specified more than once."),
])
def test_errors(text, message):
    with pytest.raises(dv.VoterError) as e:
        dv.parse_voters(text)
    assert str(e.value) == message


def test_voters_record():
    record = dv.voters_record(dv.parse_voters(f"3@h:9093:{D}"), "CONTROLLER")
    (voter,) = record.voters
    assert voter.voter_id == 3 and str(voter.voter_directory_id) == D
    assert [(e.name, e.host, e.port) for e in voter.endpoints] == [("CONTROLLER", "h", 9093)]
    assert (voter.kraft_version_feature.min_supported_version, voter.kraft_version_feature.max_supported_version) == (0, 1)
