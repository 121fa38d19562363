import { runMain } from '@zc/shared/service';
import { messagesService } from './service.js';

await runMain(messagesService);
