# ScalWS benchmark ratios (bench/report.py); run from this directory:
#   gnuplot 2026-12-05-2009-quick-vm-static-small+respond+proxy-scalwsd+nginx+h2o-io-uring-ratios.gp
set terminal svg size 1010,600 dynamic font 'sans,12' background rgb 'white'
set output '../2026-12-05-2009-quick-static-small+respond+proxy-scalwsd+nginx+h2o-io-uring-ratios.svg'
set title "scalwsd against each peer: above 1 = scalwsd better" noenhanced
set datafile separator '\t'
set datafile missing '?'
set style data histogram
set style histogram cluster gap 1
set style fill solid 0.85 border -1
set boxwidth 0.9
set ylabel 'ratio (log scale)'
set logscale y 2
set yrange [0.5:4]
set ytics ("0.5" 0.5, "1" 1, "2" 2, "4" 4)
set grid ytics
set bmargin 7
set key outside bottom center horizontal noenhanced
set xtics ("static-small\nscalwsd-uring" 0, "static-small\nnginx" 1, "static-small\nh2o" 2, "respond\nscalwsd-uring" 3, "respond\nnginx" 4, "respond\nh2o" 5, "proxy\nscalwsd-uring" 6, "proxy\nnginx" 7, "proxy\nh2o" 8) scale 0 noenhanced
set arrow 1 from graph 0, first 1 to graph 1, first 1 nohead dt 2 lw 1.5 lc rgb '#333333' front
plot '2026-12-05-2009-quick-vm-static-small+respond+proxy-scalwsd+nginx+h2o-io-uring-ratios.dat' using 2 title 'req/s (scalwsd / peer)', \
     '' using 3 title 'capacity: CPU µs/req (peer / scalwsd)'
