"""Postal addresses and how they are printed on labels and documents."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Address:
    name: str
    street: str
    postcode: str
    city: str
    country: str = "GB"


def fmt_addr(address: Address, home_country: str = "GB") -> str:
    """The address as printed lines: name, street, postcode and city, then the country if it is abroad.

    Extra whitespace is collapsed and the city is upper-cased, as the postal service asks.
    """
    lines = [
        " ".join(address.name.split()),
        " ".join(address.street.split()),
        f"{address.postcode.strip().upper()} {' '.join(address.city.split()).upper()}",
    ]
    if address.country != home_country:
        lines.append(address.country)
    return "\n".join(lines)
