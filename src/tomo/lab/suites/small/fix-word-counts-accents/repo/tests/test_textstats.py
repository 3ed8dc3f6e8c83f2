from sidebar import sidebar
from textstats import reading_time, top_words, words


def test_words_lowercase_and_punctuation():
    assert words("Hello, world! HELLO?") == ["hello", "world", "hello"]


def test_apostrophes_stay_inside_words():
    assert words("Don't stop 'til dawn") == ["don't", "stop", "til", "dawn"]


def test_numbers_are_not_words():
    assert words("3 cats and 42 dogs") == ["cats", "and", "dogs"]


def test_top_words_ties_alphabetical():
    assert top_words("b a c b a", 2) == [("a", 2), ("b", 2)]


def test_reading_time_rounds_up():
    assert reading_time("word " * 201) == 2
    assert reading_time("") == 0


def test_sidebar():
    assert sidebar("the cat and the hat", 1) == "5 words, 1 min read\nthe: 2"
