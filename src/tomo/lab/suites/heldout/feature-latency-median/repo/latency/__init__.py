"""Response-time statistics per endpoint, from the load balancer's access log."""
