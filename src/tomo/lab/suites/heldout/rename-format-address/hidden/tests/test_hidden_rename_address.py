import addresses
import invoice_header
import labels
from addresses import Address, format_address

HOME = Address("Ada Lovelace", "1 Square", "sw1", "london")
ABROAD = Address("Jean Dupont", "3 rue de la Paix", "75002", "Paris", "FR")


def test_new_name():
    assert format_address(ABROAD) == "Jean Dupont\n3 rue de la Paix\n75002 PARIS\nFR"
    assert format_address(ABROAD, home_country="FR").count("\n") == 2


def test_callers_still_work():
    assert invoice_header.invoice_header(HOME, "7").endswith("Ada Lovelace\n1 Square\nSW1 LONDON")
    assert labels.shipping_label("B-2", HOME, ABROAD).splitlines()[2] == "Ada Lovelace"


def test_old_name_is_gone():
    for module in (addresses, labels, invoice_header):
        assert not hasattr(module, "fmt_addr"), module.__name__
