import { runMain } from '@zc/shared/service';
import { subscriptionsService } from './service.js';

await runMain(subscriptionsService);
