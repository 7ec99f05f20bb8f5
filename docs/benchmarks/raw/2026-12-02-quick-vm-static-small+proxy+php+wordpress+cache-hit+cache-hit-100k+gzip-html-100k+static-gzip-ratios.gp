# ScalWS benchmark ratios (bench/report.py); run from this directory:
#   gnuplot 2026-12-02-quick-vm-static-small+proxy+php+wordpress+cache-hit+cache-hit-100k+gzip-html-100k+static-gzip-ratios.gp
set terminal svg size 1820,600 dynamic font 'sans,12' background rgb 'white'
set output '../2026-12-02-quick-static-small+proxy+php+wordpress+cache-hit+cache-hit-100k+gzip-html-100k+static-gzip-ratios.svg'
set title "scalwsd against each peer: above 1 = scalwsd better" noenhanced
set datafile separator '\t'
set datafile missing '?'
set style data histogram
set style histogram cluster gap 1
set style fill solid 0.85 border -1
set boxwidth 0.9
set ylabel 'ratio (log scale)'
set logscale y 2
set yrange [0.5:16]
set ytics ("0.5" 0.5, "1" 1, "2" 2, "4" 4, "8" 8, "16" 16)
set grid ytics
set bmargin 7
set key outside bottom center horizontal noenhanced
set xtics ("static-small\nnginx" 0, "static-small\nh2o" 1, "static-small\nlighttpd" 2, "proxy\nnginx" 3, "proxy\nh2o" 4, "proxy\nlighttpd" 5, "php\nnginx" 6, "php\nh2o" 7, "php\nlighttpd" 8, "wordpress\nnginx" 9, "wordpress\nlighttpd" 10, "cache-hit\nnginx" 11, "cache-hit-100k\nnginx" 12, "gzip-html-100k\nnginx" 13, "gzip-html-100k\nh2o" 14, "gzip-html-100k\nlighttpd" 15, "static-gzip\nnginx" 16, "static-gzip\nh2o" 17) scale 0 noenhanced
set arrow 1 from graph 0, first 1 to graph 1, first 1 nohead dt 2 lw 1.5 lc rgb '#333333' front
plot '2026-12-02-quick-vm-static-small+proxy+php+wordpress+cache-hit+cache-hit-100k+gzip-html-100k+static-gzip-ratios.dat' using 2 title 'req/s (scalwsd / peer)', \
     '' using 3 title 'capacity: CPU µs/req (peer / scalwsd)'
