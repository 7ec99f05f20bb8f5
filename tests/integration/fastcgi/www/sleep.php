<?php
// Answers after ?ms= milliseconds.
usleep(intval($_GET['ms']) * 1000);
echo "slept\n";
