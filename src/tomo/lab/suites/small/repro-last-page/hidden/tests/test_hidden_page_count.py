from listing import footer
from paging import page_count, paginate


def test_counts():
    assert [page_count(n, 5) for n in (0, 1, 4, 5, 6, 10, 11, 15, 16)] == [1, 1, 1, 1, 2, 2, 3, 3, 4]
    assert page_count(3, 20) == 1


def test_every_item_is_on_some_page():
    for total in range(0, 30):
        items = list(range(total))
        seen = []
        for number in range(1, page_count(total, 7) + 1):
            seen += paginate(items, number, per_page=7).items
        assert seen == items


def test_footer_of_partial_last_page():
    items = list(range(11))
    assert footer(paginate(items, 2, per_page=5)) == "Page 2 of 3 · ‹ previous · next ›"
    assert footer(paginate(items, 3, per_page=5)) == "Page 3 of 3 · ‹ previous"
