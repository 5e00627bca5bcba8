"""kafka-acls: Kafka 3.9's AclCommand (list, add and remove ACLs through the admin client)."""
