<?php
echo "index of dir: " . $_SERVER['SCRIPT_NAME'] . "\n";
