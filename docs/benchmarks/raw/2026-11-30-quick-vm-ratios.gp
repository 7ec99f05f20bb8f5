# ScalWS benchmark ratios (bench/report.py); run from this directory:
#   gnuplot 2026-11-30-quick-vm-ratios.gp
set terminal svg size 3800,600 dynamic font 'sans,12' background rgb 'white'
set output '../2026-11-30-quick-ratios.svg'
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
set xtics ("static-small\nnginx" 0, "static-small\nh2o" 1, "static-small\nlighttpd" 2, "static-1m\nnginx" 3, "static-1m\nh2o" 4, "static-1m\nlighttpd" 5, "respond\nnginx" 6, "respond\nh2o" 7, "respond\nlighttpd" 8, "proxy\nnginx" 9, "proxy\nh2o" 10, "proxy\nlighttpd" 11, "tls-h2-static-small\nnginx" 12, "tls-h2-static-small\nh2o" 13, "tls-h2-static-small\nlighttpd" 14, "tls-static-1m\nnginx" 15, "tls-static-1m\nh2o" 16, "tls-static-1m\nlighttpd" 17, "tls-handshake\nnginx" 18, "tls-handshake\nh2o" 19, "tls-handshake\nlighttpd" 20, "tls-resume\nnginx" 21, "tls-resume\nh2o" 22, "tls-resume\nlighttpd" 23) scale 0 noenhanced
set arrow 1 from graph 0, first 1 to graph 1, first 1 nohead dt 2 lw 1.5 lc rgb '#333333' front
plot '2026-11-30-quick-vm-ratios.dat' using 2 title 'req/s (scalwsd / peer)', \
     '' using 3 title 'capacity: CPU µs/req (peer / scalwsd)', \
     '' using 4 title 'req/s with the server capped (scalwsd / peer)', \
     '' using 5 title 'instructions/req (peer / scalwsd)'
