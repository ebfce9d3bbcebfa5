import pytest

from core.client_ip import client_network


@pytest.mark.parametrize(
    ("ip", "network"),
    [
        ("192.0.2.7", "192.0.2.7"),
        ("2001:db8:1:2::10", "2001:db8:1:2::/64"),
        ("2001:db8:1:2:ffff:ffff:ffff:ffff", "2001:db8:1:2::/64"),
        ("2001:db8:1:3::10", "2001:db8:1:3::/64"),
        ("::ffff:192.0.2.7", "192.0.2.7"),
        ("unknown", "unknown"),
    ],
)
def test_a_limit_counts_an_ipv6_client_by_its_64_and_an_ipv4_client_by_its_address(ip, network):
    assert client_network(ip) == network
