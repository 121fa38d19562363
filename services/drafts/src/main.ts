import { runMain } from '@zc/shared/service';
import { draftsService } from './service.js';

await runMain(draftsService);
