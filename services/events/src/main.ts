import { runMain } from '@zc/shared/service';
import { eventsService } from './service.js';

await runMain(eventsService);
