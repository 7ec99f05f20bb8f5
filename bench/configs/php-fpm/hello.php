<?php
echo "Hello, world!";
