from grades.records import read_scores
from grades.summary import average_by_course, average_by_student, honour_roll

SHEET = """student,course,score
Ana,Maths,90
Ben,Maths,71.5
Ana,History,78
Ben,History,82
Cleo,Maths,95
Cleo,Art,88.25
Cleo,History,91
"""


def test_one_entry_per_student():
    assert average_by_student(read_scores(SHEET)) == {"Ana": 84.0, "Ben": 76.8, "Cleo": 91.4}


def test_course_averages_unchanged():
    assert average_by_course(read_scores(SHEET)) == {"Art": 88.2, "History": 83.7, "Maths": 85.5}


def test_honour_roll():
    records = read_scores(SHEET)
    assert honour_roll(records) == ["Cleo"]
    assert honour_roll(records, cutoff=76.8) == ["Cleo", "Ana", "Ben"]
