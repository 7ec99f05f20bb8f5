body 13
