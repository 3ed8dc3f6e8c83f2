from paging import page_count, paginate


def test_partial_last_page_is_reachable():
    assert page_count(11, 5) == 3
    assert paginate(list(range(1, 12)), 3, per_page=5).items == [11]
