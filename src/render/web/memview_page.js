/* memview_page.js: start-up of the memory page (gpuprof memory --html). */
'use strict';
gpMemCharts('mem-data', 'mem-charts');
document.querySelectorAll('table.sortable').forEach(gp.sortable);
document.body.setAttribute('data-ready', '1');
