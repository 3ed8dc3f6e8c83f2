from addresses import Address, format_address
from invoice_header import invoice_header
from labels import shipping_label

HOME = Address("Ada  Lovelace", "12 St James's   Square", "sw1y 4jh", "london")
ABROAD = Address("Jean Dupont", "3 rue de la Paix", "75002", "Paris", "FR")


def test_home_address():
    assert format_address(HOME) == "Ada Lovelace\n12 St James's Square\nSW1Y 4JH LONDON"


def test_abroad_gets_country():
    assert format_address(ABROAD).splitlines()[-1] == "FR"


def test_label():
    label = shipping_label("A-17", ABROAD, HOME).splitlines()
    assert label[0] == "Ada Lovelace, 12 St James's Square, SW1Y"
    assert label[4] == "75002 PARIS"
    assert label[-1] == "Order A-17"


def test_invoice_header():
    assert invoice_header(HOME, "2024-9").endswith("Bill to:\nAda Lovelace\n12 St James's Square\nSW1Y 4JH LONDON")
