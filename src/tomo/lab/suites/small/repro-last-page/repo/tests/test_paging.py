import pytest

from listing import footer
from paging import PageOutOfRange, page_count, paginate

ITEMS = list(range(1, 11))


def test_full_pages():
    assert page_count(10, 5) == 2
    assert paginate(ITEMS, 2, per_page=5).items == [6, 7, 8, 9, 10]


def test_empty_list_has_one_page():
    assert page_count(0, 20) == 1
    assert paginate([], 1).items == []


def test_out_of_range():
    with pytest.raises(PageOutOfRange, match="page 3 does not exist"):
        paginate(ITEMS, 3, per_page=5)
    with pytest.raises(PageOutOfRange):
        paginate(ITEMS, 0, per_page=5)


def test_per_page_positive():
    with pytest.raises(ValueError):
        page_count(3, 0)


def test_footer():
    assert footer(paginate(ITEMS, 1, per_page=5)) == "Page 1 of 2 · next ›"
    assert footer(paginate(ITEMS, 2, per_page=5)) == "Page 2 of 2 · ‹ previous"
