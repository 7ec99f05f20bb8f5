<?php
// Never to be sent as a file: the marker below only shows in the source.
$marker = 'SOURCE' . '-MARKER';
echo "ran\n";
// SOURCE-MARKER-IN-SOURCE
