import pytest

from grades.records import read_scores
from grades.summary import average_by_course

SHEET = """student,course,score
Ana,Maths,90
Ben,Maths,71.5
Ana,History,78
,,
Ben,History,82
"""


def test_read_scores():
    records = read_scores(SHEET)
    assert len(records) == 4
    assert records[1] == {"student": "Ben", "course": "Maths", "score": 71.5}


@pytest.mark.parametrize("bad", ["x", "101"])
def test_bad_score(bad):
    with pytest.raises(ValueError, match="row 2"):
        read_scores(f"student,course,score\nAna,Maths,{bad}\n")


def test_average_by_course():
    assert average_by_course(read_scores(SHEET)) == {"History": 80.0, "Maths": 80.8}
