package localdgraph

// ZeroHTTP returns zero's HTTP address.
func (c *Cluster) ZeroHTTP() string { return c.zero.httpAddr }
