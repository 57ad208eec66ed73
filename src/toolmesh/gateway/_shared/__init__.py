"""What the gateway's two faces share: the HTTP guard, a profile's view of the catalog, and the
shapes each face offers the other."""
