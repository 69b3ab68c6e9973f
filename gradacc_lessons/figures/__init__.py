"""Every figure (`plots`) and every interactive explorer (`explorers`) of the course."""
