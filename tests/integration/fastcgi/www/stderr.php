<?php
// A message to the error log (FastCGI's stderr), then a normal answer.
error_log('fastcgi-test-message ' . (isset($_GET['m']) ? $_GET['m'] : ''));
echo "logged\n";
